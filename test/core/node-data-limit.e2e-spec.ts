/**
 * The size of a lock node's data (`nodeData`, with host and pid) against what a ZooKeeper server
 * reads: a server drops the connection on a request longer than its `jute.maxbuffer` (0xfffff
 * bytes by default), so a create carrying about 1 MB of data made the session reconnect for as
 * long as the caller waited (thousands of state changes in 5 s) and a free lock was never
 * granted. A nodeData over MAX_NODE_DATA_BYTES fails when the client is made, naming the option,
 * the limit and what to do; a lock node at the limit, on the longest lock path, still works.
 */
import { hostname } from 'node:os';
import {
  InvalidLockOptionsError,
  MAX_LOCK_PATH_BYTES,
  MAX_NODE_DATA_BYTES,
  ZkLockClient,
} from '../../lib';
import { useTestRoot } from './support/core-fixture';
import { zkConnectFromEnv } from './support/zk-admin';

/** A `nodeData` whose lock node data (host, pid, then its fields, as JSON) is `bytes` long. */
function nodeDataOf(bytes: number): { blob: string } {
  const around = Buffer.byteLength(
    JSON.stringify({ host: hostname(), pid: process.pid, blob: '' }),
  );
  return { blob: 'x'.repeat(bytes - around) };
}

describe('the size of a lock node', () => {
  const fixture = useTestRoot('node-data-limit');

  it('is stated: 1,000,000 bytes, far enough below jute.maxbuffer for the longest path', () => {
    expect(MAX_NODE_DATA_BYTES).toBe(1_000_000);
  });

  // 1,048,540 bytes: under the client's own check (1 MiB), over the server's frame limit.
  it.each([1_048_540, 2_000_000])(
    'a nodeData of %i bytes fails when the client is made, before any connection',
    async (bytes) => {
      const made = ZkLockClient.connect({
        connectionString: zkConnectFromEnv(),
        sessions: 1,
        nodeData: nodeDataOf(bytes),
      });
      const error = await made.then(
        async (client) => {
          await client.close();
          return undefined;
        },
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(InvalidLockOptionsError);
      const message = (error as Error).message;
      expect(message).toContain('ZkLockClient.connect()');
      expect(message).toContain(`nodeData makes each lock node's data ${bytes} bytes`);
      expect(message).toContain('over the limit of 1000000 bytes');
      expect(message).toContain('jute.maxbuffer');
      expect(message).toMatch(/Record a reference .* instead of the data itself/);
      expect(message).not.toContain('xxxx'); // the value is not repeated
    },
  );

  it('a lock node at the limit, on the longest lock path, is granted, read and released', async () => {
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace: fixture.root,
      sessions: 1,
      nodeData: nodeDataOf(MAX_NODE_DATA_BYTES),
    });
    try {
      const path = `/${'p'.repeat(MAX_LOCK_PATH_BYTES - fixture.root.length - 1)}`;
      const lock = await client.acquire(path, { waitTimeoutMs: 30_000 });
      const seen = await client.inspect(path);
      expect(seen.holder?.data.blob).toBe(nodeDataOf(MAX_NODE_DATA_BYTES).blob);
      await lock.release();
      const lease = await client.semaphore('/leases', { maxLeases: 1 }).acquire();
      await lease.release();
    } finally {
      await client.close();
    }
  });
});
