/**
 * An unresolvable host and a refused connection both reported only "did not answer
 * within 10000 ms", the cause hidden. The connect error says which, with what to check. (TLS
 * against a plain client port: tls.e2e-spec.ts, "fails before the handshake, naming
 * secureClientPort".)
 */
import { ZkLockClient, ZooKeeperUnavailableError } from '../../lib';
import { freePort } from '../support/zookeeper';

const connectError = async (connectionString: string): Promise<Error> => {
  const outcome = await ZkLockClient.connect({ connectionString, connectTimeoutMs: 2_000 }).then(
    async (client) => {
      await client.close();
      return new Error('connected');
    },
    (err: Error) => err,
  );
  expect(outcome).toBeInstanceOf(ZooKeeperUnavailableError);
  return outcome;
};

describe('why a connection failed', () => {
  it('a host name DNS does not know', async () => {
    const error = await connectError('no-such-host.invalid:2181');
    expect(error.message).toContain('DNS name not found: "no-such-host.invalid"');
    expect(error.message).toContain('Check the host names in the connection string');
    expect((error.cause as { code?: string }).code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });

  it('a port nothing listens on', async () => {
    const port = await freePort(); // free: closed again by the time we connect
    const error = await connectError(`127.0.0.1:${port}`);
    expect(error.message).toContain(`connection refused by 127.0.0.1:${port} (ECONNREFUSED)`);
    expect(error.message).toContain('clientPort');
    expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });
});
