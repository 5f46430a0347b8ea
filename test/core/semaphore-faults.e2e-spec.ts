/**
 * Curator's known semaphore faults: leases kept after a lost session (CURATOR-595)
 * and orphaned lease nodes (CURATOR-315, -462). On a server of this file's own, frozen past the
 * session timeout.
 */
import { LockLostError } from '../../lib';
import { useOwnServer } from './support/own-server';
import { eventually } from './support/zk-admin';
import { scaled } from '../support/time-scale';

const SESSION_MS = 3000;

describe('semaphore under faults', () => {
  const zk = useOwnServer('semaphore-faults', { sessionTimeoutMs: SESSION_MS });
  const leasesOf = (path: string): Promise<string[]> => zk.admin.children(`${path}/leases`);

  it('a lease whose session is lost aborts its signal, and the limit is whole again afterwards', async () => {
    const path = `${zk.root}/lost`;
    const client = await zk.connect();
    const semaphore = client.semaphore(path, { maxLeases: 1 });
    const lease = await semaphore.acquire();
    const signal = lease.signal;
    await zk.freezeServerUntil('the lease is lost', () => signal.aborted, scaled(60_000));
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(signal.reason).toMatchObject({ path, reason: 'connection-lost' });
    expect(lease.state).toBe('lost');
    await lease.release(); // nothing of the new session's is deleted
    // The same client, in its new session, takes the only lease once the old node expired.
    const again = await semaphore.acquire({ waitTimeoutMs: 60_000 });
    expect(again.state).toBe('held');
    const leases = await leasesOf(path);
    expect(leases).toHaveLength(1);
    await again.release();
    await eventually('no lease node is left', async () => (await leasesOf(path)).length === 0);
  });

  it('a waiter that gives up while the server is frozen leaves no orphan lease', async () => {
    const path = `${zk.root}/orphan`;
    // Sessions outlive the freeze: only the waiter's own wait runs out while the server is down.
    const client = await zk.connect({ sessionTimeoutMs: 30_000 });
    const holder = await client.semaphore(path, { maxLeases: 1 }).acquire();
    const other = await zk.connect({ sessionTimeoutMs: 30_000, requestTimeoutMs: 1000 });
    const waiting = other
      .semaphore(path, { maxLeases: 1 })
      .acquire({ waitTimeoutMs: 1500 })
      .catch((e: unknown) => e);
    await eventually('the waiter queued', async () => (await leasesOf(path)).length === 2);
    let settled = false;
    void waiting.then(() => (settled = true));
    await zk.freezeServerUntil('the waiter gave up', () => settled, scaled(60_000));
    expect(await waiting).toMatchObject({ name: 'LockTimeoutError' });
    await eventually('only the holder is left', async () => (await leasesOf(path)).length === 1);
    await holder.release();
    await eventually('no lease node is left', async () => (await leasesOf(path)).length === 0);
  });

  // The lease analogue of session-pause.e2e-spec.ts's buffered-event guard: a waiter frozen past
  // its session timeout while the lease it waits for frees up must not take a lease on the
  // strength of what it reads when it wakes. It also passes without the lease grant's
  // proven-alive check (semaphore.ts), because after SIGCONT Node runs the session clock's due
  // timer before it reads the socket; the check covers the other order, as locks do.
  it('a waiter frozen past its session takes no lease on what it reads when it wakes', async () => {
    const path = `${zk.root}/frozen-waiter`;
    const client = await zk.connect({ sessionTimeoutMs: 30_000 });
    const semaphore = client.semaphore(path, { maxLeases: 1 });
    const holder = await semaphore.acquire();
    const waiter = await zk.startAgent();
    const reply = waiter.send({ op: 'lease', path, maxLeases: 1 });
    await eventually('the waiter queued', async () => (await leasesOf(path)).length === 2);
    waiter.child.kill('SIGSTOP');
    let answered = false;
    try {
      await holder.release(); // the change event waits in the frozen waiter's socket
      // Taken once the server has expired the frozen waiter's session and deleted its nodes.
      const other = await semaphore.acquire({ waitTimeoutMs: scaled(60_000) });
      void reply.then(() => (answered = true));
      waiter.child.kill('SIGCONT');
      await eventually('the waiter queued again in a new session (or took a lease)', async () => {
        return answered || (await leasesOf(path)).length === 2;
      });
      const answeredWhileOtherHeld = answered;
      await other.release();
      expect(await reply).toMatchObject({ type: 'acquired' });
      expect(answeredWhileOtherHeld).toBe(false);
      await waiter.release(path);
    } finally {
      waiter.child.kill('SIGCONT');
    }
    await eventually('no lease node is left', async () => (await leasesOf(path)).length === 0);
  });
});
