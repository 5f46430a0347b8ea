import { ACL } from './zk-client';
import {
  AclEntry,
  CONTAINER,
  MultiOp,
  OP,
  createOpOf,
  encodeCreate,
  encodeDelete,
  encodeMulti,
  encodePathWatch,
} from './jute-requests';

// node-zookeeper-client's own jute encoding, the reference every byte is checked against.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const jute = require('node-zookeeper-client/lib/jute');

/** The client's encoding of `payload` (a jute record) as request `xid` of `type`. */
function theirs(xid: number, type: number, payload: any, chroot?: string): Buffer {
  const header = new jute.protocol.RequestHeader();
  header.xid = xid;
  header.type = type;
  if (chroot) payload.setChrootPath(chroot);
  return new jute.Request(header, payload).toBuffer();
}

const record = (name: string, fields: Record<string, unknown>): any =>
  Object.assign(new jute.protocol[name](), fields);

// Its ACL objects, from ours (its jute encodes its own ACL class).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const reference = require('node-zookeeper-client');
const theirAcl = (acl: readonly AclEntry[]): Array<{ toRecord(): unknown }> =>
  acl.map((a) => new reference.ACL(a.permission, new reference.Id(a.id.scheme, a.id.id)));
const toRecords = (acl: readonly AclEntry[]): unknown[] => theirAcl(acl).map((a) => a.toRecord());

/** Paths as the session sends them (after a chroot, if any), and the chroots to try. */
const PATHS = ['/', '/locks/order:42', '/app/ünïcödé/_c_1-lock-0000000007', `/${'x'.repeat(300)}`];
const CHROOTS = [undefined, '/chroot/app'];
const XIDS = [0, 1, 0x7fffffff, -8];
const withChroot = (chroot: string | undefined, path: string): string =>
  !chroot ? path : path === '/' ? chroot : chroot + path;

describe('our jute encoders, byte for byte against a reference jute implementation', () => {
  it.each(CHROOTS)('create (chroot %s): every path, data and ACL', (chroot) => {
    for (const path of PATHS) {
      for (const data of [null, Buffer.alloc(0), Buffer.from('owner-1 ✓')]) {
        for (const acl of [ACL.OPEN_ACL_UNSAFE, ACL.CREATOR_ALL_ACL] as AclEntry[][]) {
          for (const flags of [0, 1, 2, 3]) {
            for (const xid of XIDS) {
              const fields = { path, acl: toRecords(acl), flags, data: data ?? undefined };
              expect(encodeCreate(xid, withChroot(chroot, path), data, acl, flags)).toEqual(
                theirs(xid, OP.CREATE, record('CreateRequest', fields), chroot),
              );
            }
          }
        }
      }
    }
  });

  it.each(CHROOTS)(
    'a CONTAINER create (chroot %s) goes as createContainer (19), with the CreateRequest body',
    (chroot) => {
      for (const path of PATHS) {
        for (const acl of [ACL.OPEN_ACL_UNSAFE, ACL.CREATOR_ALL_ACL] as AclEntry[][]) {
          const data = Buffer.from('nestjs-zookeeper-lock');
          const fields = { path, acl: toRecords(acl), flags: CONTAINER, data };
          expect(encodeCreate(7, withChroot(chroot, path), data, acl, CONTAINER)).toEqual(
            theirs(7, OP.CREATE_CONTAINER, record('CreateRequest', fields), chroot),
          );
        }
      }
      expect([0, 1, 2, 3].map(createOpOf)).toEqual([1, 1, 1, 1]);
      expect(createOpOf(CONTAINER)).toBe(19);
    },
  );

  it.each(CHROOTS)('delete (chroot %s)', (chroot) => {
    for (const path of PATHS) {
      for (const version of [-1, 0, 7, 0x7fffffff]) {
        for (const xid of XIDS) {
          expect(encodeDelete(xid, withChroot(chroot, path), version)).toEqual(
            theirs(xid, OP.DELETE, record('DeleteRequest', { path, version }), chroot),
          );
        }
      }
    }
  });

  it.each([
    [OP.GET_CHILDREN2, 'GetChildren2Request'],
    [OP.GET_DATA, 'GetDataRequest'],
    [OP.EXISTS, 'ExistsRequest'],
  ] as const)('op %i (%s), with and without a watch', (type, name) => {
    for (const chroot of CHROOTS) {
      for (const path of PATHS) {
        for (const watch of [true, false]) {
          for (const xid of XIDS) {
            expect(encodePathWatch(xid, type, withChroot(chroot, path), watch)).toEqual(
              theirs(xid, type, record(name, { path, watch }), chroot),
            );
          }
        }
      }
    }
  });

  it('multi: create, delete, setData and check ops, with the closing header', () => {
    const ops: MultiOp[] = [
      {
        type: OP.CREATE,
        path: '/locks/a',
        data: Buffer.from('x'),
        acl: ACL.OPEN_ACL_UNSAFE as AclEntry[],
        flags: 3,
      },
      {
        type: OP.CREATE,
        path: '/locks/b',
        data: null,
        acl: ACL.CREATOR_ALL_ACL as AclEntry[],
        flags: 0,
      },
      { type: OP.DELETE, path: '/locks/ç', version: 5 },
      { type: OP.SET_DATA, path: '/locks/d', data: Buffer.from('data'), version: 2 },
      { type: OP.CHECK, path: '/locks', version: 9 },
    ];
    const transaction = new jute.TransactionRequest(
      ops.map((op) =>
        op.type === OP.CREATE
          ? { ...op, acls: theirAcl(op.acl), mode: op.flags, data: op.data ?? undefined }
          : op,
      ),
    );
    for (const xid of XIDS) {
      expect(encodeMulti(xid, ops)).toEqual(theirs(xid, OP.MULTI, transaction));
      expect(encodeMulti(xid, [])).toEqual(theirs(xid, OP.MULTI, new jute.TransactionRequest([])));
    }
  });
});
