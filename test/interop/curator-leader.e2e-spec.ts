/**
 * Apache Curator's LeaderLatch (5.4, Debian's package, in its own JVM) and this
 * library's election on the same paths are one election: one leader at a time across both, and
 * leadership moves both ways, Java -> Node and Node -> Java, when the leader leaves (close,
 * stepDown) and when its process is killed (its session expires).
 */
import { LeaderLatch, ZkLockClient } from '../../lib';
import { exited, killAllFixtures, LockAgent, nextMessage } from '../core/support/agents';
import type { AgentReply } from '../core/fixtures/lock-agent';
import { eventually, testRoot, ZkAdmin, zkConnectFromEnv } from '../core/support/zk-admin';
import { LockPeer } from '../support/peers';
import { scaled } from '../support/time-scale';

/** Session timeout of the Java peer and of the Node process that get killed. */
const KILLED_SESSION_MS = 4_000;

describe('Curator LeaderLatch and our election on the same paths', () => {
  const root = testRoot('interop-leader');
  let peer: LockPeer;
  let ours: ZkLockClient;
  let admin: ZkAdmin;
  const elections: LeaderLatch[] = [];
  const elect = (path: string, id: string): LeaderLatch => {
    const election = ours.election(path, { participantId: id });
    elections.push(election);
    return election;
  };
  /** What the Java latch `id` said last about its leadership. */
  const javaLeads = (id: string): boolean =>
    peer.events.filter((e) => e.id === id && e.event !== 'started').at(-1)?.event === 'leader';

  beforeAll(async () => {
    const connect = zkConnectFromEnv();
    peer = await LockPeer.curator(connect, KILLED_SESSION_MS);
    ours = await ZkLockClient.connect({ connectionString: connect });
    admin = await ZkAdmin.connect(connect);
  }, scaled(300_000));

  afterAll(async () => {
    await Promise.allSettled(elections.map((e) => e.close()));
    await killAllFixtures();
    await peer?.stop();
    await ours?.close();
    await admin?.removeTree(root);
    admin?.close();
  });

  it('Java leads first; our participant waits, then leads once the Java latch closes', async () => {
    const path = `${root}/java-first`;
    peer.startLatch('java-1', path);
    await peer.next((e) => e.id === 'java-1' && e.event === 'leader');
    const node = elect(path, 'node-1');
    await node.start();
    expect(node.isLeader).toBe(false);
    // One election: both see the same line, with Curator's participant ids.
    expect(await node.getParticipants()).toEqual([
      { id: 'java-1', isLeader: true },
      { id: 'node-1', isLeader: false },
    ]);
    expect(await node.getLeader()).toEqual({ id: 'java-1', isLeader: true });

    peer.closeLatch('java-1');
    await peer.next((e) => e.id === 'java-1' && e.event === 'closed');
    const leadership = await node.whenLeader({ waitTimeoutMs: scaled(30_000) });
    expect(leadership.participantId).toBe('node-1');
    expect(javaLeads('java-1')).toBe(false);
    expect(await node.getParticipants()).toEqual([{ id: 'node-1', isLeader: true }]);
    await node.close();
  });

  it('we lead first; Java leads once we step down, and we lead again once it closes', async () => {
    const path = `${root}/node-first`;
    const node = elect(path, 'node-2');
    const first = await node.whenLeader();
    peer.startLatch('java-2', path);
    await peer.next((e) => e.id === 'java-2' && e.event === 'started');
    await eventually('Java joined', async () => (await node.getParticipants()).length === 2);
    expect(javaLeads('java-2')).toBe(false);
    expect((await node.getParticipants()).map((p) => p.id)).toEqual(['node-2', 'java-2']);

    // Our node goes only after we stopped leading: when Java hears it leads, we do not.
    let weLedWhenJavaLed: boolean | undefined;
    const javaLed = peer.next((e) => e.id === 'java-2' && e.event === 'leader');
    void javaLed.then(() => (weLedWhenJavaLed = node.isLeader));
    await node.stepDown();
    expect(first.signal.aborted).toBe(true);
    await javaLed;
    expect(weLedWhenJavaLed).toBe(false);
    expect(node.isLeader).toBe(false);
    expect(await node.getParticipants()).toEqual([
      { id: 'java-2', isLeader: true },
      { id: 'node-2', isLeader: false },
    ]);

    peer.closeLatch('java-2');
    const second = await node.whenLeader({ waitTimeoutMs: scaled(30_000) });
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    await peer.next((e) => e.id === 'java-2' && e.event === 'closed');
    expect(javaLeads('java-2')).toBe(false);
    await node.close();
  });

  it('our leader process killed: the Java latch leads once its session expires', async () => {
    const path = `${root}/node-killed`;
    const agent = await LockAgent.start({
      connectionString: zkConnectFromEnv(),
      sessionTimeoutMs: KILLED_SESSION_MS,
    });
    const led = nextMessage<AgentReply>(agent.child, (m) => m.type === 'leader');
    expect(await agent.send({ op: 'elect', path, participantId: 'node-3' })).toMatchObject({
      type: 'joined',
    });
    await led;
    peer.startLatch('java-3', path);
    await peer.next((e) => e.id === 'java-3' && e.event === 'started');
    await eventually('Java joined', async () => (await admin.children(path)).length === 2);
    expect(javaLeads('java-3')).toBe(false);

    agent.child.kill('SIGKILL');
    expect(await exited(agent.child)).toBe('SIGKILL');
    await peer.next((e) => e.id === 'java-3' && e.event === 'leader', scaled(60_000));
    const watcher = elect(path, 'watcher');
    expect(await watcher.getLeader()).toEqual({ id: 'java-3', isLeader: true });
  });

  it('the Java leader killed: our participant leads once its session expires', async () => {
    const path = `${root}/node-killed`; // java-3 leads it (previous test)
    const node = elect(path, 'node-4');
    await node.start();
    expect(node.isLeader).toBe(false);
    expect((await node.getParticipants()).map((p) => p.id)).toEqual(['java-3', 'node-4']);
    await peer.kill();
    const leadership = await node.whenLeader({ waitTimeoutMs: scaled(60_000) });
    expect(leadership.participantId).toBe('node-4');
    expect(await node.getParticipants()).toEqual([{ id: 'node-4', isLeader: true }]);
    await node.close();
  });
});
