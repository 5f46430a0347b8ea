/**
 * A member that comes back after a stop must be the server its clients reach: waitServing fails
 * at once, naming the port, when another ZooKeeper took the port meanwhile or the member could
 * not bind it (test/support/zookeeper.ts). The test admin's requests are bounded too.
 * The failures print the end of server.log to stderr: that is expected here.
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { eventually, ZkAdmin } from '../core/support/zk-admin';
import { fourLetterWord, ZooKeeperServer } from './zookeeper';

describe('a ZooKeeper member restarted on its port', () => {
  let ours: ZooKeeperServer;
  let other: ZooKeeperServer;

  beforeAll(async () => {
    [ours, other] = await Promise.all([ZooKeeperServer.start(), ZooKeeperServer.start()]);
  });

  afterAll(async () => {
    await Promise.all([ours?.stop(), other?.stop()]);
  });

  it('is not taken for another ZooKeeper that answers on its port', async () => {
    const member = ours.members[0];
    const port = member.clientPort;
    await member.stop();
    // The other server comes back on our port, as a server of another run could.
    await other.members[0].stop();
    appendFileSync(join(other.members[0].dataDir, 'zoo.cfg'), `clientPort=${port}\n`);
    other.members[0].start();
    try {
      await eventually('the other server answers on our port', async () =>
        /Mode: standalone/.test(await fourLetterWord(port, 'srvr').catch(() => '')),
      );
      member.start();
      // Whichever it sees first: the other server's answer, or our JVM's exit on the taken port.
      const otherDir = join(other.members[0].dataDir, 'version-2').replace(
        /[.*+?^${}()|[\]\\]/g,
        '\\$&',
      );
      await expect(member.waitServing()).rejects.toThrow(
        new RegExp(
          `on port ${port}: (the port answers for another ZooKeeper \\(dataDir=${otherDir}` +
            `|exited \\(1\\): a port of .* is taken)`,
        ),
      );
    } finally {
      await other.members[0].stop();
    }
  });

  it('fails naming the BindException when its port is taken, and comes back once it is free', async () => {
    const member = ours.members[0];
    await member.stop();
    const taken = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) =>
      taken.once('error', reject).listen(member.clientPort, '127.0.0.1', resolve),
    );
    try {
      await expect(member.restart()).rejects.toThrow(
        new RegExp(
          `on port ${member.clientPort}: exited \\(1\\): a port of .* is taken ` +
            `\\(java.net.BindException\\); listening on ${member.clientPort}: `,
        ),
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    await member.restart();
    expect(await member.mode()).toBe('standalone');
  });

  it("the test admin's request to a server that does not answer fails naming it", async () => {
    const admin = await ZkAdmin.connect(ours.connectionString, undefined, [], 500);
    ours.members[0].pause();
    try {
      await expect(admin.children('/frozen')).rejects.toThrow(
        `test admin: no answer to getChildren /frozen from ${ours.connectionString} in 500 ms`,
      );
    } finally {
      ours.members[0].resume();
      admin.close();
    }
  });
});
