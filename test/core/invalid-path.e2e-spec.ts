/**
 * Invalid lock paths are rejected with InvalidLockPathError before anything is
 * sent: the server's packet counter does not move.
 */
import { InvalidLockPathError, MAX_LOCK_PATH_BYTES, ZkLockClient, ZkLockError } from '../../lib';
import { mntr, ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { testRoot } from './support/zk-admin';

const INVALID: unknown[] = [
  '',
  'no-leading-slash',
  '/',
  '/trailing/',
  '/double//slash',
  '/a/./b',
  '/a/../b',
  '/nul\u0000byte',
  '/bell\u0007',
  '/del\u007f',
  '/emoji-\u{1F512}',
  '/private-\uE000',
  '/special-\uFFFE',
  undefined,
  42,
];

describe('invalid lock paths', () => {
  const root = testRoot('invalid');
  let server: ZooKeeperServer;
  let locks: ZkLockClient;

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
    // The longest session the server allows: pings (which count as packets) come rarely.
    locks = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs: 60_000,
    });
  });

  afterAll(async () => {
    await locks.close();
    await server.stop(); // this file's own server: its data goes with it
  });

  const packets = async (): Promise<number> =>
    (await mntr(server.members[0].clientPort)).zk_packets_received;

  it.each(INVALID.map((path) => [JSON.stringify(path) ?? String(path), path]))(
    'rejects %s in acquire, tryAcquire, withLock and inspect',
    async (_label, path) => {
      const calls: Array<() => Promise<unknown>> = [
        () => locks.acquire(path as string),
        () => locks.tryAcquire(path as string),
        () => locks.withLock(path as string, () => 'ran'),
        () => locks.inspect(path as string),
      ];
      for (const call of calls) {
        const error = await call().then(
          (value) => value,
          (err: unknown) => err,
        );
        expect(error).toBeInstanceOf(InvalidLockPathError);
        expect(error).toBeInstanceOf(ZkLockError);
        expect((error as InvalidLockPathError).path).toBe(String(path));
        expect((error as Error).message).toContain('Invalid lock path');
      }
    },
  );

  it('sends nothing to ZooKeeper for any of them', async () => {
    // A four-letter-word probe is itself counted as a packet: measure what one probe costs.
    const first = await packets();
    const before = await packets();
    const probeCost = before - first;
    for (const path of INVALID) {
      await Promise.allSettled([
        locks.acquire(path as string),
        locks.tryAcquire(path as string),
        locks.withLock(path as string, () => 'ran'),
        locks.inspect(path as string),
      ]);
    }
    expect((await packets()) - before).toBe(probeCost);

    // The counter does see real traffic: a valid call moves it by more than a probe.
    const beforeValid = await packets();
    await (await locks.tryAcquire(`${root}/valid`))?.release();
    expect((await packets()) - beforeValid).toBeGreaterThan(probeCost);
  });

  it(`rejects a path over ${MAX_LOCK_PATH_BYTES} bytes (namespace included) before sending anything`, async () => {
    // A path longer than the server's jute.maxbuffer (1 MB) makes it drop the connection on
    // every request naming it, forever. With the namespace of `namespaced`, a
    // path that fits alone is over the limit.
    const namespaced = await ZkLockClient.connect({
      connectionString: server.connectionString,
      namespace: '/ns',
    });
    const fitsAlone = `/${'é'.repeat(MAX_LOCK_PATH_BYTES / 2 - 1)}`; // 2 bytes a character
    const cases: Array<[ZkLockClient, string]> = [
      [locks, `/${'x'.repeat(MAX_LOCK_PATH_BYTES)}`],
      [locks, `/${'x'.repeat(1024 * 1024)}`],
      [locks, `/${'é'.repeat(MAX_LOCK_PATH_BYTES / 2)}`],
      [namespaced, fitsAlone],
    ];
    try {
      expect(Buffer.byteLength(fitsAlone)).toBe(MAX_LOCK_PATH_BYTES - 1);
      const first = await packets();
      const before = await packets();
      const probeCost = before - first;
      for (const [client, path] of cases) {
        const calls = [
          () => client.acquire(path, { waitTimeoutMs: 1_000 }),
          () => client.tryAcquire(path),
          () => client.withLock(path, () => 'ran'),
          () => client.readLock(path).acquire(),
          () => client.inspect(path),
        ];
        for (const call of calls) {
          const error = await call().then(
            () => 'no error',
            (err: unknown) => err,
          );
          expect(error).toBeInstanceOf(InvalidLockPathError);
          expect((error as InvalidLockPathError).path).toBe(path);
          const message = (error as Error).message;
          expect(message).toContain(`over the limit of ${MAX_LOCK_PATH_BYTES} bytes`);
          expect(message.length).toBeLessThan(500); // a 400 answer carries it: not the path
        }
      }
      expect((await packets()) - before).toBe(probeCost);
      // At the limit, a path works.
      await (
        await locks.tryAcquire(`${root}/${'x'.repeat(MAX_LOCK_PATH_BYTES - root.length - 1)}`)
      )?.release();
    } finally {
      await namespaced.close();
    }
  });

  it('rejects an invalid namespace when connecting', async () => {
    const error = await ZkLockClient.connect({
      connectionString: server.connectionString,
      namespace: 'no-slash',
    }).catch((err: unknown) => err);
    if (error instanceof ZkLockClient) await error.close();
    expect(error).toBeInstanceOf(InvalidLockPathError);
  });
});
