/**
 * TLS to ZooKeeper's secureClientPort (Netty, ssl.clientAuth=need) with
 * certificates made at run time: mutual TLS works for locking across processes, and every
 * refusal (an untrusted client certificate, none, an untrusted server, the wrong port or name)
 * fails with a ZooKeeperUnavailableError that says what to change.
 */
import { createHash } from 'node:crypto';
import {
  ZkLockClient,
  ZkLockClientOptions,
  ZkTlsOptions,
  ZooKeeperUnavailableError,
} from '../../lib';
import { makeTestCertificates, TestCertificates } from '../support/certs';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { LockAgent } from './support/agents';
import { testRoot, ZkAdmin } from './support/zk-admin';
import { scaled } from '../support/time-scale';

/**
 * A certificate refused by every server ends the wait at once, however long connectTimeoutMs
 * is: these tests do not depend on how fast the machine is.
 */
const CONNECT_MS = 60_000;
/** Other failures (a port that does not speak TLS) wait for connectTimeoutMs. */
const PLAIN_PORT_CONNECT_MS = 5_000;
/** For a connect that must succeed: a TLS handshake on a loaded machine can take a while. */
const SUCCESS_CONNECT_MS = scaled(60_000);

// node-zookeeper-client ships no types; declare only what this file uses.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ACL, Id, createClient } = require('node-zookeeper-client') as {
  ACL: new (permission: number, id: unknown) => unknown;
  Id: new (scheme: string, id: string) => unknown;
  createClient(connectionString: string): RawClient;
};
/** A plain client of the server's clientPort, for a create with an ACL the library never sends. */
interface RawClient {
  once(event: 'connected', listener: () => void): void;
  connect(): void;
  close(): void;
  create(
    path: string,
    data: Buffer | undefined,
    acls: unknown[],
    mode: number,
    cb: (err: Error | null) => void,
  ): void;
  remove(path: string, version: number, cb: (err: Error | null) => void): void;
}

describe('TLS to the secureClientPort (mutual TLS)', () => {
  let certs: TestCertificates;
  let server: ZooKeeperServer;
  const root = testRoot('tls');
  const clients: ZkLockClient[] = [];
  const agents: LockAgent[] = [];

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    certs = makeTestCertificates();
    server = await ZooKeeperServer.start({
      secureClientPort: true,
      extraConfig: certs.serverConfig('need'),
    });
  });

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await Promise.allSettled(clients.map((c) => c.close()));
    await server?.stop(); // this file's own server: its data goes with it
    certs?.remove();
  });

  const mutual = (): ZkTlsOptions => ({
    ca: certs.ca,
    cert: certs.client.cert,
    key: certs.client.key,
  });

  const connect = async (options: Partial<ZkLockClientOptions>): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: server.secureConnectionString,
      namespace: root,
      connectTimeoutMs: SUCCESS_CONNECT_MS,
      ...options,
    });
    clients.push(client);
    return client;
  };

  const refusal = (options: Partial<ZkLockClientOptions>): Promise<Error> =>
    connect({ connectTimeoutMs: CONNECT_MS, ...options }).then(
      () => new Error('connected'),
      (err: Error) => err,
    );

  it('locks over TLS: two processes exclude each other on the TLS port only', async () => {
    const locks = await connect({ tls: mutual() });
    const agent = await LockAgent.start({
      connectionString: server.secureConnectionString,
      namespace: root,
      tls: mutual(),
      connectTimeoutMs: SUCCESS_CONNECT_MS,
    });
    agents.push(agent);
    const lock = await locks.acquire('/locks/a');
    expect(await agent.send({ op: 'tryAcquire', path: '/locks/a' })).toMatchObject({
      token: null,
    });
    const waiting = agent.send({ op: 'acquire', path: '/locks/a', waitTimeoutMs: 30_000 });
    await lock.release();
    expect(await waiting).toMatchObject({ type: 'acquired' });
    await agent.release('/locks/a');
    // By name too: the certificate lists DNS:localhost.
    const port = server.members[0].secureClientPort;
    const byName = await connect({ connectionString: `localhost:${port}`, tls: mutual() });
    await byName.withLock('/locks/a', (l) => expect(l.state).toBe('held'));
  });

  it('TLS with auth and acl creator: the nodes carry the digest identity', async () => {
    const locks = await connect({ tls: mutual(), auth: 'tls-app:pw', acl: 'creator' });
    const digest = createHash('sha1').update('tls-app:pw').digest('base64');
    const admin = await ZkAdmin.connect(server.connectionString, 15_000, ['tls-app:pw']);
    try {
      await locks.withLock('/locks/acl', async () => {
        const acl = await admin.acl(`${root}/locks/acl`);
        expect(acl).toContainEqual({ id: `digest:tls-app:${digest}`, permission: 31 });
      });
    } finally {
      admin.close();
    }
  });

  it('acl creator with only a client certificate: the certificate is the identity', async () => {
    // The servers authenticate client certificates (ssl.authProvider, x509 by default), so
    // CREATOR_ALL_ACL names the certificate's subject: clients without it get NOAUTH.
    const locks = await connect({ tls: mutual(), acl: 'creator' });
    const anonymous = await ZkAdmin.connect(server.connectionString);
    const peer = await LockAgent.start({
      connectionString: server.secureConnectionString,
      namespace: root,
      tls: mutual(),
      acl: 'creator',
      connectTimeoutMs: SUCCESS_CONNECT_MS,
    });
    agents.push(peer);
    try {
      const lock = await locks.acquire('/x509/locks/a');
      // Not even listed (READ is the creator's too), nor deleted.
      await expect(anonymous.children(`${root}/x509/locks/a`)).rejects.toMatchObject({
        code: -102,
      });
      await expect(anonymous.remove(`${root}/x509/locks/a`)).rejects.toMatchObject({
        code: -102,
      });
      // The same certificate in another process is the same identity: it queues as usual.
      expect(await peer.send({ op: 'tryAcquire', path: '/x509/locks/a' })).toMatchObject({
        token: null,
      });
      await lock.release();
      expect(await peer.send({ op: 'tryAcquire', path: '/x509/locks/a' })).toMatchObject({
        token: expect.any(String),
      });
      await peer.release('/x509/locks/a');
    } finally {
      anonymous.close();
    }
  });

  it('acl creator: a lock path another certificate of the same CA made is refused, even when its ACL also names ours', async () => {
    // A namespace operators opened to both certificates' clients (here: to everyone).
    const namespace = '/tls-same-ca';
    const admin = await ZkAdmin.connect(server.connectionString);
    await admin.create(namespace, '', 'persistent').finally(() => admin.close());
    // The lock path as the other certificate's client would leave it after letting ours in
    // beside its own: our nodes would sit where it can list and delete them. Made over the
    // plain port with that ACL, since the library never sends an ACL naming two identities.
    const path = `${namespace}/order:1`;
    const raw = createClient(server.connectionString);
    await new Promise<void>((resolve) => {
      raw.once('connected', resolve);
      raw.connect();
    });
    const request = (send: (cb: (err: Error | null) => void) => void) =>
      new Promise<void>((resolve, reject) => send((err) => (err ? reject(err) : resolve())));
    try {
      const acl = ['CN=other-client', 'CN=client'].map((dn) => new ACL(31, new Id('x509', dn)));
      await request((cb) => raw.create(path, undefined, acl, 0, cb));
      const locks = await connect({
        namespace,
        tls: mutual(),
        acl: 'creator',
        onWarning: () => undefined,
      });
      await expect(locks.tryAcquire('/order:1')).rejects.toMatchObject({
        name: 'UnexpectedAclError',
        path,
      });
      await expect(locks.tryAcquire('/order:1')).rejects.toThrow(/x509:CN=other-client/);
    } finally {
      await request((cb) => raw.remove(path, -1, cb)).finally(() => raw.close());
    }
  });

  it('a client certificate the server does not trust is refused, saying what to set', async () => {
    const error = await refusal({
      tls: { ca: certs.ca, cert: certs.untrustedClient.cert, key: certs.untrustedClient.key },
    });
    expect(error).toBeInstanceOf(ZooKeeperUnavailableError);
    expect(error.message).toMatch(/every server refused the TLS handshake/);
    // The alert's code as OpenSSL spells it: ERR_SSL_SSLV3_ALERT_... on Node 20 and 22,
    // ERR_SSL_SSL/TLS_ALERT_... on Node 24 and later.
    expect(error.message).toMatch(
      /TLS: ZooKeeper server 127\.0\.0\.1:\d+ refused the handshake \(ERR_SSL_[\w/]+_ALERT_\w+.*set tls\.cert and tls\.key/,
    );
    expect(error.message).not.toContain('PRIVATE KEY');
  });

  it('no client certificate under ssl.clientAuth=need is refused the same way', async () => {
    const error = await refusal({ tls: { ca: certs.ca } });
    expect(error).toBeInstanceOf(ZooKeeperUnavailableError);
    expect(error.message).toMatch(/refused the handshake.*set tls\.cert and tls\.key/);
  });

  it('a server certificate this client does not trust: the error names tls.ca', async () => {
    const error = await refusal({
      tls: { ca: certs.otherCa, cert: certs.client.cert, key: certs.client.key },
    });
    expect(error).toBeInstanceOf(ZooKeeperUnavailableError);
    expect(error.message).toMatch(
      /TLS: the certificate of ZooKeeper server 127\.0\.0\.1:\d+ is not trusted \(SELF_SIGNED_CERT_IN_CHAIN.*Set tls\.ca/,
    );
  });

  it('a server name the certificate does not list: the error names tls.servername', async () => {
    const error = await refusal({ tls: { ...mutual(), servername: 'zk.example.org' } });
    expect(error.message).toMatch(/does not name .*ERR_TLS_CERT_ALTNAME_INVALID.*tls\.servername/);
  });

  it('TLS to the plain client port fails before the handshake, naming secureClientPort', async () => {
    const error = await refusal({
      connectionString: server.connectionString,
      connectTimeoutMs: PLAIN_PORT_CONNECT_MS,
      tls: mutual(),
    });
    expect(error).toBeInstanceOf(ZooKeeperUnavailableError);
    expect(error.message).toMatch(/before the handshake completed.*secureClientPort/);
  });

  it('tls options that cannot be loaded fail before connecting, without the key in the message', async () => {
    const error = await refusal({
      tls: { ca: certs.ca, cert: certs.client.cert, key: 'not a key' },
    });
    expect(error.name).toBe('InvalidLockOptionsError');
    expect(error.message).toMatch(/tls options cannot be loaded.*PEM text/);
    const wrongKey = await refusal({
      tls: { ca: certs.ca, cert: certs.client.cert, key: certs.untrustedClient.key },
    });
    expect(wrongKey.name).toBe('InvalidLockOptionsError');
    expect(wrongKey.message).not.toContain('PRIVATE KEY');
  });
});
