/**
 * The leak detector counts what the tracked work started, including what its callbacks started
 * later, and nothing the runner starts meanwhile (test/support/own-resources.ts).
 */
import { createServer, connect, type Socket } from 'node:net';
import { ZkLockClient } from '../../lib';
import { InMemoryZooKeeper } from '../../lib/testing';
import { trackOwnResources } from './own-resources';

describe('trackOwnResources', () => {
  it('reports a timer the work leaves behind, and one its callbacks start later', async () => {
    const timers: NodeJS.Timeout[] = [];
    const own = await trackOwnResources(async () => {
      timers.push(setTimeout(() => {}, 60_000));
      setImmediate(() => timers.push(setTimeout(() => {}, 70_000)));
      setTimeout(() => {}, 5); // fires and is gone: not a leak
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    try {
      expect(await own.leftOpen()).toEqual(['60000 ms timer', '70000 ms timer']);
    } finally {
      timers.forEach(clearTimeout);
    }
  });

  it('ignores a timer the runner starts while the work runs', async () => {
    let runnerTimer: NodeJS.Timeout | undefined;
    // Like a reporter's tick: started before the work, its callback runs during it.
    const tick = setInterval(() => (runnerTimer ??= setTimeout(() => {}, 60_000)), 5);
    try {
      const own = await trackOwnResources(() => new Promise((resolve) => setTimeout(resolve, 50)));
      expect(runnerTimer).toBeDefined();
      expect(await own.leftOpen()).toEqual([]);
    } finally {
      clearInterval(tick);
      clearTimeout(runnerTimer);
    }
  });

  it('reports a socket the work leaves open, and not once it is closed', async () => {
    const accepted: Socket[] = [];
    const server = createServer((socket) => accepted.push(socket.on('error', () => {})));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    let socket: Socket | undefined;
    try {
      const own = await trackOwnResources(async () => {
        socket = connect(port, '127.0.0.1');
        await new Promise((resolve) => socket!.once('connect', resolve));
      });
      expect(await own.leftOpen(100)).toEqual(['TCP socket']);
      const closed = await trackOwnResources(async () => {
        const other = connect(port, '127.0.0.1');
        await new Promise((resolve) => other.once('connect', resolve));
        await new Promise<void>((resolve) => other.end(() => resolve()));
        other.destroy();
      });
      expect(await closed.leftOpen()).toEqual([]);
    } finally {
      socket?.destroy();
      accepted.forEach((s) => s.destroy());
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('catches the library client a test forgets to close', async () => {
    const zookeeper = await InMemoryZooKeeper.start();
    let locks: ZkLockClient | undefined;
    try {
      const own = await trackOwnResources(async () => {
        locks = await ZkLockClient.connect({ connectionString: zookeeper.connectionString });
        await (await locks.acquire('/forgotten')).release();
      });
      expect(await own.leftOpen(100)).toContain('TCP socket');
    } finally {
      await locks?.close();
      await zookeeper.close();
    }
  });
});
