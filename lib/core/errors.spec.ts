import {
  ClientClosedError,
  InvalidLockOptionsError,
  InvalidLockPathError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  ZkLockError,
  ZooKeeperUnavailableError,
} from './errors';

describe('errors', () => {
  const all = [
    new InvalidLockPathError('/a/', 'it must not end with "/"'),
    new LockTimeoutError('/locks/order:42', 5000, 3),
    new LockAbortedError('/locks/a', new Error('shutdown')),
    new LockLostError('/locks/a', 'session-expired', 'the session expired after 10000 ms'),
    new ZooKeeperUnavailableError('127.0.0.1:2181', 10000, 'the connect request'),
    new ClientClosedError('/locks/a'),
    new InvalidLockOptionsError(
      'acquireAll',
      'the path list is empty',
      'pass at least one lock path',
    ),
  ];

  it.each(all.map((e) => [e.constructor.name, e]))(
    '%s is a ZkLockError named after its class',
    (name, error) => {
      expect(error).toBeInstanceOf(ZkLockError);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).name).toBe(name);
      expect((error as Error).stack).toContain(name as string);
    },
  );

  it('InvalidLockPathError names the path and the reason', () => {
    const error = new InvalidLockPathError('/a/', 'it must not end with "/"');
    expect(error.path).toBe('/a/');
    expect(error.reason).toBe('it must not end with "/"');
    expect(error.message).toBe('Invalid lock path "/a/": it must not end with "/".');
  });

  it('LockTimeoutError names the path, the limit, the queue and what to do', () => {
    const error = new LockTimeoutError('/locks/order:42', 5000, 3);
    expect(error).toMatchObject({ path: '/locks/order:42', waitTimeoutMs: 5000, ahead: 3 });
    expect(error.message).toContain('Timed out after 5000 ms waiting for lock "/locks/order:42"');
    expect(error.message).toContain('(3 callers ahead of it, holding or waiting)');
    expect(error.message).toContain('Raise waitTimeoutMs');
    expect(new LockTimeoutError('/a', 1, 1).message).toContain('(1 caller ahead of it,');
    // An unknown place is said so, not "0 holders ahead".
    expect(new LockTimeoutError('/a', 1, undefined).message).toContain(
      '(its place in line was not known yet)',
    );
  });

  it("LockTimeoutError counts other processes' queue nodes as nodes (each may be a batch), its own callers as callers", () => {
    const error = new LockTimeoutError('/a', 1, { otherNodes: 1, ownCallers: 5 });
    expect(error).toMatchObject({ ahead: 6, queue: { otherNodes: 1, ownCallers: 5 } });
    expect(error.message).toContain(
      "(ahead of it: 1 queue node of other processes, each one caller or a batch of that process's callers, and 5 callers of this process, holding or waiting)",
    );
    expect(new LockTimeoutError('/a', 1, { otherNodes: 3, ownCallers: 0 }).message).toContain(
      "(ahead of it: 3 queue nodes of other processes, each one caller or a batch of that process's callers)",
    );
    expect(new LockTimeoutError('/a', 1, { otherNodes: 0, ownCallers: 1 }).message).toContain(
      '(ahead of it: 1 caller of this process, holding or waiting)',
    );
    expect(new LockTimeoutError('/a', 1, 2).queue).toBeUndefined();
  });

  it('LockAbortedError keeps the abort reason as its cause', () => {
    const reason = new Error('shutdown');
    const error = new LockAbortedError('/locks/a', reason);
    expect(error.path).toBe('/locks/a');
    expect(error.cause).toBe(reason);
    expect(error.message).toContain('"/locks/a"');
  });

  it('LockLostError names the path, the reason and what to do', () => {
    const error = new LockLostError('/locks/a', 'connection-lost', 'no answer for 10000 ms');
    expect(error).toMatchObject({ path: '/locks/a', reason: 'connection-lost' });
    expect(error.message).toContain(
      'Lost lock "/locks/a" (connection-lost): no answer for 10000 ms',
    );
    expect(error.message).toContain('fencing token');
  });

  it('ZooKeeperUnavailableError names the servers, the limit and what to do', () => {
    const error = new ZooKeeperUnavailableError('127.0.0.1:2181', 10000, 'the connect request');
    expect(error).toMatchObject({ connectionString: '127.0.0.1:2181', timeoutMs: 10000 });
    expect(error.message).toContain(
      '"127.0.0.1:2181" did not answer the connect request within 10000 ms',
    );
    expect(error.message).toContain('connectTimeoutMs');
  });

  it('ClientClosedError names the path and what to do', () => {
    const error = new ClientClosedError('/locks/a');
    expect(error.path).toBe('/locks/a');
    expect(error.message).toContain('"/locks/a"');
    expect(error.message).toContain('ZkLockClient.connect()');
  });
});
