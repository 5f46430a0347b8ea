/**
 * The read/write lock. Readers share (across processes), writers exclude, a writer
 * that queued is never starved by later readers, downgrade works without letting a queued writer
 * in (CURATOR-621), upgrade fails at once, writer tokens grow, Curator's node names.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LockHandle, LockLostError, LockModeError, ZkLockClient } from '../../lib';
import { useCoreFixture } from './support/core-fixture';
import { checkReadWriteLog } from './support/critical-log';
import { runWorkers, scratchDir } from './support/workers';
import { eventually, settledFlag, zkConnectFromEnv } from './support/zk-admin';

describe('read/write lock', () => {
  const zk = useCoreFixture('rwlock', { parentCleanupDelayMs: 100 });
  const scratch = scratchDir();
  const others: ZkLockClient[] = [];
  afterAll(async () => {
    await Promise.all(others.map((c) => c.close()));
    scratch.remove();
  });

  const p = (name: string): string => `${zk.root}/${name}`;
  /** Another client: its own session, so it queues in ZooKeeper like another process. */
  const other = async (): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
    others.push(client);
    return client;
  };
  const nodesOf = (path: string): Promise<string[]> => zk.admin.children(path);
  it("uses Curator's node names; readers of one tick share one node and hold together", async () => {
    const reads = await Promise.all(
      Array.from({ length: 10 }, () => zk.locks.readLock(p('names')).acquire()),
    );
    const [readNode] = await nodesOf(p('names'));
    expect(await nodesOf(p('names'))).toHaveLength(1);
    expect(readNode).toMatch(/^_c_[0-9a-f-]{36}-__READ__\d{10}$/);
    expect(new Set(reads.map((r) => r.fencingToken)).size).toBe(1);
    await Promise.all(reads.map((r) => r.release()));
    const write = await zk.locks.writeLock(p('names')).acquire();
    expect((await nodesOf(p('names')))[0]).toMatch(/^_c_[0-9a-f-]{36}-__WRIT__\d{10}$/);
    expect(write.fencingToken).toBeGreaterThan(reads[0].fencingToken);
    await write.release();
  });

  it('a writer excludes readers and writers of other clients; tryAcquire says so at once', async () => {
    const b = await other();
    const write = await zk.locks.writeLock(p('excl')).acquire();
    expect(await b.readLock(p('excl')).tryAcquire()).toBeNull();
    expect(await b.writeLock(p('excl')).tryAcquire()).toBeNull();
    const read = await b.readLock(p('excl')).tryAcquire();
    expect(read).toBeNull();
    await write.release();
    const shared = await b.readLock(p('excl')).tryAcquire();
    expect(shared).not.toBeNull();
    const mine = await zk.locks.readLock(p('excl')).tryAcquire();
    expect(mine).not.toBeNull(); // readers share
    expect(await zk.locks.writeLock(p('excl')).tryAcquire()).toBeNull();
    await Promise.all([shared!.release(), mine!.release()]);
  });

  it('a queued writer is not starved by readers that come after it (FIFO by sequence)', async () => {
    const [b, c] = [await other(), await other()];
    const firstRead = await zk.locks.readLock(p('fifo')).acquire();
    const writer = b.writeLock(p('fifo')).acquire();
    await eventually('the writer queued', async () => (await nodesOf(p('fifo'))).length === 2);
    const lateRead = c.readLock(p('fifo')).acquire();
    await eventually('the late reader queued', async () => (await nodesOf(p('fifo'))).length === 3);
    const lateReadDone = settledFlag(lateRead);
    const writerDone = settledFlag(writer);
    expect(await c.readLock(p('fifo')).tryAcquire()).toBeNull();
    await firstRead.release();
    const write = await writer;
    expect(lateReadDone()).toBe(false);
    await write.release();
    const read = await lateRead;
    expect(writerDone()).toBe(true);
    expect(read.fencingToken).toBeGreaterThan(write.fencingToken);
    await read.release();
  });

  it('downgrade: a read under a held write re-enters it, and a queued writer waits for the read (CURATOR-621)', async () => {
    const b = await other();
    let queued: Promise<LockHandle> | undefined;
    let readAfterWrite: LockHandle | undefined;
    await zk.locks.writeLock(p('down')).withLock(async (write) => {
      queued = b.writeLock(p('down')).acquire();
      await eventually(
        'the other writer queued',
        async () => (await nodesOf(p('down'))).length === 2,
      );
      readAfterWrite = await zk.locks.readLock(p('down')).acquire({ waitTimeoutMs: 5000 });
      expect(readAfterWrite.fencingToken).toBe(write.fencingToken);
      expect(zk.locks.isHeld(p('down'))).toBe(true);
    });
    // The write is released; the downgraded read still holds, so the queued writer waits.
    const queuedDone = settledFlag(queued!);
    expect(await nodesOf(p('down'))).toHaveLength(2);
    expect(queuedDone()).toBe(false);
    await readAfterWrite!.release();
    const next = await queued!;
    expect(next.fencingToken).toBeGreaterThan(readAfterWrite!.fencingToken);
    await next.release();
  });

  it('upgrade (write while holding only the read) fails at once with LockModeError naming the path', async () => {
    await zk.locks.readLock(p('up')).withLock(async () => {
      const error = await zk.locks
        .writeLock(p('up'))
        .acquire()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockModeError);
      expect((error as Error).message).toContain(`"${p('up')}"`);
      expect((error as Error).message).toMatch(/downgraded to a read lock, not upgraded/);
    });
    expect(await nodesOf(p('up'))).toEqual([]);
  });

  it('a mutex and a read/write lock on one path fail with LockModeError before any request', async () => {
    const mutex = await zk.locks.acquire(p('mixed'));
    await expect(zk.locks.readLock(p('mixed')).acquire()).rejects.toBeInstanceOf(LockModeError);
    await expect(zk.locks.writeLock(p('mixed')).tryAcquire()).rejects.toThrow(
      /one kind of lock per path/,
    );
    await mutex.release();
    const read = await zk.locks.readLock(p('mixed2')).acquire();
    await expect(zk.locks.acquire(p('mixed2'))).rejects.toBeInstanceOf(LockModeError);
    expect(await nodesOf(p('mixed2'))).toHaveLength(1);
    await read.release();
  });

  it('a reader beyond maxNodesPerPath is served once one of its read nodes goes', async () => {
    const one = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      maxNodesPerPath: 1,
    });
    others.push(one);
    const first = await one.readLock(p('bounded')).acquire();
    const second = one.readLock(p('bounded')).acquire({ waitTimeoutMs: 30_000 });
    expect(await nodesOf(p('bounded'))).toHaveLength(1); // no second node while one is held
    await first.release();
    const lock = await second;
    expect(await nodesOf(p('bounded'))).toHaveLength(1);
    await lock.release();
  });

  it('readers sharing a node all learn of its loss', async () => {
    const reads = await Promise.all([1, 2, 3].map(() => zk.locks.readLock(p('lost')).acquire()));
    const signals = reads.map((r) => r.watchForLoss());
    const [node] = await nodesOf(p('lost'));
    await zk.admin.removeTree(`${p('lost')}/${node}`);
    await eventually('every reader was told', () => signals.every((s) => s.aborted));
    for (const s of signals) expect(s.reason).toBeInstanceOf(LockLostError);
    await Promise.all(reads.map((r) => r.release()));
  });

  it('3 processes x 4 callers, 80 % reads: writers alone, readers together across processes, writer tokens grow', async () => {
    const logFile = join(scratch.dir, 'rw.log');
    writeFileSync(logFile, '');
    await runWorkers('rw-worker', 3, {
      LOCK_PATH: p('mixed-load'),
      WRITE_RATIO: '0.2',
      CALLERS: '4',
      CYCLES: '8',
      LOG_FILE: logFile,
    });
    const check = checkReadWriteLog(logFile); // throws if a writer overlapped anyone
    expect(check.reads + check.writes).toBe(3 * 4 * 8);
    expect(check.writes).toBeGreaterThan(0);
    expect(check.maxReaderProcesses).toBeGreaterThan(1);
    for (let i = 1; i < check.writeTokens.length; i++) {
      expect(check.writeTokens[i]).toBeGreaterThan(check.writeTokens[i - 1]);
    }
    await eventually('no node is left', async () => (await nodesOf(p('mixed-load'))).length === 0);
  });
});
