/**
 * Leadership is held like a lock. A leader whose server goes silent past the
 * session timeout (the server frozen with SIGSTOP) is told it may have lost leadership: its
 * signal aborts with LockLostError and 'notLeader' says 'lost'; it does not count as leader while
 * its session is suspended; once ZooKeeper is back it joins again and leads with a greater token.
 * Runs its own ZooKeeper server, so freezing it affects no other test file (and its watch count
 * is ours alone: elections that closed leave no watch on the server).
 */
import { LeadershipEnd, LockLostError } from '../../lib';
import { mntr } from '../support/zookeeper';
import { useOwnServer } from './support/own-server';
import { eventually } from './support/zk-admin';
import { scaled } from '../support/time-scale';
import { sessionIndexOf } from '../../lib/core/zookeeper/zk-connection';

/** Our clock declares the session lost after 2 s of silence. */
const SHORT_SESSION_MS = 2_000;

describe('leadership and the session', () => {
  const zk = useOwnServer('election-loss', { sessionTimeoutMs: SHORT_SESSION_MS });

  it('aborts the signal on session loss, then leads again on a new node and session', async () => {
    const path = `${zk.root}/loss`;
    const client = await zk.connect();
    const election = client.election(path, { participantId: 'a' });
    const ends: LeadershipEnd[] = [];
    election.on('notLeader', (end) => ends.push(end));
    const first = await election.whenLeader();
    // The election's session: the one of the client's sessions its path hashes to.
    const index = sessionIndexOf(path, client.sessions.length);
    const session = () => client.sessions[index].id;
    const sessionBefore = session();
    // Its own session's SUSPENDED, not the client's: the client is SUSPENDED once any of its
    // sessions is, and another may go silent first while ours is still within its safe window.
    const whileSuspended: boolean[] = [];
    client.on('session', (info) => {
      if (info.index === index && info.state === 'SUSPENDED') {
        whileSuspended.push(election.isLeader);
      }
    });
    await zk.freezeServerUntil('leadership is lost', () => first.signal.aborted);
    expect(first.signal.reason).toBeInstanceOf(LockLostError);
    expect(ends).toEqual([{ reason: 'lost', error: first.signal.reason }]);
    expect(election.isLeader).toBe(false);
    // While its session is disconnected, ownership is unknown: not a leader.
    expect(whileSuspended).toEqual([false]);

    const second = await election.whenLeader({ waitTimeoutMs: scaled(30_000) });
    expect(session()).not.toBe(sessionBefore);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(second.signal.aborted).toBe(false);
    await eventually('one node of ours is left', async () => {
      return (await zk.admin.children(path)).length === 1;
    });
    await election.close();
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('leaves no watch on the server once every participant has closed', async () => {
    const path = `${zk.root}/watches`;
    const watches = async (): Promise<number> =>
      (await mntr(zk.server.members[0].clientPort)).zk_watch_count;
    const before = await watches();
    const [a, b, c] = await Promise.all([zk.connect(), zk.connect(), zk.connect()]);
    const ea = a.election(path, { participantId: 'a' });
    const eb = b.election(path, { participantId: 'b' });
    const ec = c.election(path, { participantId: 'c' });
    await ea.whenLeader();
    await eb.start();
    await ec.start();
    expect(await watches()).toBeGreaterThan(before);
    await ea.stepDown(); // b leads; a waits behind c
    await eb.whenLeader();
    await ec.close(); // a waiter leaves: a now waits behind b
    await eb.close();
    await ea.whenLeader();
    await ea.close();
    await eventually('no watch is left', async () => (await watches()) === before);
  });
});
