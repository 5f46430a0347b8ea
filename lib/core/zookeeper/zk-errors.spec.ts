import { InvalidLockOptionsError, LockAccessDeniedError, ZooKeeperAuthFailedError } from '../errors';
import { ZkCode, ZkRequestError, requestError } from './zk-errors';

describe('requestError: the one error a request answered with a code gets', () => {
  it('NOAUTH: access denied on the node, for a create on its parent', () => {
    const create = requestError(ZkCode.NO_AUTH, 'create', '/app/locks/a/_c_x-lock-', undefined);
    expect(create).toBeInstanceOf(LockAccessDeniedError);
    expect(create).toMatchObject({ path: '/app/locks/a', operation: 'create a node under' });
    const read = requestError(ZkCode.NO_AUTH, 'getData', '/app/locks/a', undefined);
    expect(read).toMatchObject({ path: '/app/locks/a', operation: 'read' });
    expect(requestError(ZkCode.NO_AUTH, 'create', '/a', undefined)).toMatchObject({ path: '/' });
  });

  it("INVALID_ACL: the acl 'creator' option refused, naming the path", () => {
    const error = requestError(ZkCode.INVALID_ACL, 'create', '/app/locks/a', undefined);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect(error.message).toContain('"/app/locks/a"');
    expect(error.message).toContain("acl 'creator' (INVALID_ACL)");
  });

  it("AUTH_FAILED: the session's own error once it has one, else the code", () => {
    const failure = new ZooKeeperAuthFailedError('zk1:2181', 'digest');
    expect(requestError(ZkCode.AUTH_FAILED, 'delete', '/a', failure)).toBe(failure);
    const bare = requestError(ZkCode.AUTH_FAILED, 'delete', '/a', undefined);
    expect(bare).toBeInstanceOf(ZkRequestError);
    expect(bare.message).toBe('ZooKeeper delete "/a": AUTH_FAILED[-115]');
  });

  it('any other code, known or not: a ZkRequestError with the code, its name and the request', () => {
    const noNode = requestError(ZkCode.NO_NODE, 'create', '/a/b', undefined);
    expect(noNode).toBeInstanceOf(ZkRequestError);
    expect(noNode).toMatchObject({ code: -101, op: 'create', path: '/a/b' });
    expect(noNode.message).toBe('ZooKeeper create "/a/b": NO_NODE[-101]');
    const unknown = requestError(-9999, 'getChildren', '/a', undefined);
    expect(unknown).toMatchObject({ code: -9999 });
    expect(unknown.message).toBe('ZooKeeper getChildren "/a": UNKNOWN_CODE[-9999]');
  });
});
