/**
 * Digest credentials (`auth`) without `tls` cross the network as plain bytes (ZooKeeper's digest
 * scheme): `connect()` warns once, whatever the number of sessions, through `onWarning` or else
 * as a Node process warning (code ZKLOCK_AUTH_WITHOUT_TLS). Without `auth` there is nothing to
 * warn about. With TLS: test/nest/credentials.e2e-spec.ts ("no warning with TLS").
 */
import { ZkLockClient, ZkLockClientOptions } from '../../lib';
import { testRoot } from './support/zk-admin';

const CODE = 'ZKLOCK_AUTH_WITHOUT_TLS';

describe('digest credentials without TLS', () => {
  const namespace = testRoot('auth-warning');

  /** Connects (4 sessions, the default) and closes; the process warnings of our code meanwhile. */
  async function connectOnce(options: Partial<ZkLockClientOptions>): Promise<Error[]> {
    const warnings: Error[] = [];
    const onWarning = (warning: Error & { code?: string }) => {
      if (warning.code === CODE) warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const client = await ZkLockClient.connect({
        connectionString: process.env.ZK_CONNECT!,
        namespace,
        ...options,
      });
      await client.close();
      // Node emits process warnings on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      return warnings;
    } finally {
      process.off('warning', onWarning);
    }
  }

  it('warns once per connect as a process warning, naming what to do', async () => {
    const warnings = await connectOnce({ auth: 'orders:S3cret' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toMatch(/auth.*without tls.*plain/i);
    expect(warnings[0].message).toContain('secureClientPort');
    expect(warnings[0].message).not.toContain('S3cret');
  });

  it('warns once through onWarning instead, when given', async () => {
    const told: string[] = [];
    const warnings = await connectOnce({
      auth: ['orders:S3cret', 'audit:Other'],
      onWarning: (message) => told.push(message),
    });
    expect(warnings).toEqual([]);
    expect(told).toHaveLength(1);
    expect(told[0]).not.toMatch(/S3cret|Other/);
  });

  it('does not warn without auth', async () => {
    const told: string[] = [];
    expect(await connectOnce({ onWarning: (message) => told.push(message) })).toEqual([]);
    expect(told).toEqual([]);
  });
});
