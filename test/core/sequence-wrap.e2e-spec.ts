/**
 * ZooKeeper's sequence suffix is the lock node's signed 32-bit child-version
 * counter of creates. The server here starts from a snapshot (written by ZooKeeper's own classes) whose lock
 * nodes have a counter near 2^31, as on a path that was never idle for two billion locks. Nobody
 * may queue past the guard: the path drains, is re-created (counter 0, larger czxid) and locking
 * goes on, in order, with growing fencing tokens.
 */
import { rmSync } from 'node:fs';
import { InvalidLockPathError, lockErrorInfo } from '../../lib';
import { LOCK_PATH_DATA, SEQUENCE_GUARD } from '../../lib/core/engine/contender';
import { writeSnapshot } from '../support/zookeeper-snapshot';
import { useOwnServer } from './support/own-server';
import { eventually } from './support/zk-admin';
import { scaled } from '../support/time-scale';

const WRAP = 2 ** 31;
const sequenceOf = (token: bigint): bigint => (token >> 32n) & 0xffff_ffffn;
const czxidOf = (token: bigint): bigint => token >> 64n;

describe('sequence numbers near 2^31', () => {
  let seeded = '';
  const zk = useOwnServer('sequence-wrap', {
    sessionTimeoutMs: 10_000,
    server: () => {
      const marker = LOCK_PATH_DATA.toString();
      seeded = writeSnapshot([
        { path: wrapPath, nextSequence: WRAP - 2, data: marker },
        { path: drainPath, nextSequence: SEQUENCE_GUARD - 1, data: marker },
        { path: foreignPath, nextSequence: WRAP - 2, data: 'someone else' },
        { path: wrappedPath, nextSequence: WRAP - 1, data: marker },
      ]);
      return { initialDataDir: seeded };
    },
  });
  const wrapPath = `${zk.root}/wrap/lock`;
  const drainPath = `${zk.root}/drain/lock`;
  const foreignPath = `${zk.root}/foreign/lock`;
  const wrappedPath = `${zk.root}/wrapped/lock`;
  afterAll(() => rmSync(seeded, { recursive: true, force: true }));

  it('keeps fencing tokens growing past the counter limit, by re-creating the path', async () => {
    expect(await zk.admin.nextSequence(wrapPath)).toBe(WRAP - 2); // the server loaded the tree
    const seededCzxid = await zk.admin.czxid(wrapPath);
    const locks = await zk.connect();
    const holder = await locks.acquire(wrapPath);
    const others = [await zk.startAgent(), await zk.startAgent()];
    for (const agent of others) {
      // Each try creates and deletes a node: the counter reaches 2^31-1 on the way.
      expect(await agent.send({ op: 'tryAcquire', path: wrapPath })).toMatchObject({
        type: 'tried',
        token: null,
      });
    }
    // Three holders in turn: fencing tokens must grow strictly from each to the next. (On
    // ZooKeeper 3.8 the counter sticks at 2^31-1 instead of wrapping: equal sequences.)
    const second = others[0].acquire(wrapPath, scaled(30_000));
    await eventually('the second waiter queued', async () => {
      return (await zk.admin.children(wrapPath)).length === 2;
    });
    const third = others[1].acquire(wrapPath, scaled(30_000));
    await eventually('the third waiter queued', async () => {
      return (await zk.admin.children(wrapPath)).length === 3;
    });
    await holder.release();
    const secondToken = await second;
    await others[0].release(wrapPath);
    const thirdToken = await third;
    await others[1].release(wrapPath);
    expect(secondToken).toBeGreaterThan(holder.fencingToken);
    expect(thirdToken).toBeGreaterThan(secondToken);
    // The path was re-created: small sequences on a lock node with a new czxid.
    expect(sequenceOf(holder.fencingToken)).toBeLessThan(10n);
    expect(czxidOf(holder.fencingToken)).toBeGreaterThan(seededCzxid);
  });

  it('stops queuing at the guard until the path drains, then serves the waiter', async () => {
    const locks = await zk.connect();
    const holder = await locks.acquire(drainPath); // sequence SEQUENCE_GUARD - 1: below it
    expect(sequenceOf(holder.fencingToken)).toBe(BigInt(SEQUENCE_GUARD - 1));
    const [tryer, waiter] = [await zk.startAgent(), await zk.startAgent()];
    const waited = waiter.acquire(drainPath, scaled(30_000));
    // The waiter created its node past the guard, deleted it, and waits off the queue.
    await eventually('the waiter backed off', async () => {
      const next = await zk.admin.nextSequence(drainPath);
      return next === SEQUENCE_GUARD + 1 && (await zk.admin.children(drainPath)).length === 1;
    });
    // A try past the guard sees the path busy and gives up at once, leaving no node either.
    expect(await tryer.send({ op: 'tryAcquire', path: drainPath })).toMatchObject({
      token: null,
    });
    expect(await zk.admin.nextSequence(drainPath)).toBe(SEQUENCE_GUARD + 2);
    expect(await zk.admin.children(drainPath)).toHaveLength(1);
    await holder.release();
    const token = await waited;
    expect(token).toBeGreaterThan(holder.fencingToken);
    expect(sequenceOf(token)).toBeLessThan(10n);
    await waiter.release(drainPath);
    await zk.expectFreeForOthers(drainPath);
  });

  it("refuses a lock node near the wrap that it did not create as the operator's problem, not the caller's", async () => {
    const locks = await zk.connect();
    const outcome = await locks.acquire(foreignPath, { waitTimeoutMs: 10_000 }).catch((e) => e);
    // Not a 400 blaming the caller: a 500 whose answer shows nothing of the path or namespace.
    expect(outcome).not.toBeInstanceOf(InvalidLockPathError);
    expect(lockErrorInfo(outcome)).toEqual({
      code: 'LOCK_ACCESS_DENIED',
      status: 500,
      message: 'Internal server error',
    });
    // The log says what the operator must do.
    expect((outcome as Error).message).toContain(`"${foreignPath}"`);
    expect((outcome as Error).message).toContain('2^31');
    expect((outcome as Error).message).toContain('deleteall');
    expect(await zk.admin.getData(foreignPath)).toBe('someone else');
  });

  it('re-creates a lock node whose counter has already reached 2^31-1', async () => {
    // Another client takes the last sequence, 2^31-1. From then on ZooKeeper 3.8 names every
    // sequential child 2147483647 (older servers hand out negative numbers, sorted first).
    const last = await zk.admin.create(`${wrappedPath}/other-`, '', 'sequential');
    expect(last.endsWith(String(WRAP - 1))).toBe(true);
    await zk.admin.removeTree(last);
    const locks = await zk.connect();
    const lock = await locks.acquire(wrappedPath, { waitTimeoutMs: 20_000 });
    expect(sequenceOf(lock.fencingToken)).toBeLessThan(10n);
    await lock.release();
  });
});
