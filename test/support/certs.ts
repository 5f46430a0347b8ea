/**
 * Test certificates made at run time with the `openssl` CLI (and Java's `keytool` for the
 * server's trust store): a CA, a server certificate for 127.0.0.1/localhost, a client
 * certificate, another client certificate from the same CA (another identity), and a second CA with its own client certificate that the server does not trust.
 * ZooKeeper 3.8 reads the PKCS12 stores (`ssl.keyStore.type=PKCS12`). Never used by lib/.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PemPair {
  cert: string;
  key: string;
}

export interface TestCertificates {
  dir: string;
  /** PEM of the CA that signed `server` and `client`. */
  ca: string;
  server: PemPair;
  client: PemPair;
  /** Another client certificate from the same CA: trusted, with its own subject (CN=other-client). */
  otherClient: PemPair;
  /** A client certificate signed by another CA (the server refuses it). */
  untrustedClient: PemPair;
  /** The other CA's PEM (a client that trusts only it refuses the server). */
  otherCa: string;
  /** PKCS12 key store with the server's key and certificate chain. */
  serverKeyStore: string;
  /** PKCS12 trust store holding the CA certificate (made with keytool). */
  serverTrustStore: string;
  /** Password of both stores. */
  storePassword: string;
  /** ZooKeeper server settings for a Netty secureClientPort with these stores. */
  serverConfig(clientAuth: 'need' | 'want' | 'none'): string[];
  remove(): void;
}

function run(cmd: string, args: string[], cwd: string): void {
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): void {
  run(
    'openssl',
    [
      'req',
      ...['-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2'],
      ...['-keyout', `${name}.key`, '-out', `${name}.pem`, '-subj', `/CN=${name}`],
      ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=keyCertSign'],
    ],
    dir,
  );
}

function makeLeaf(dir: string, name: string, ca: string, ext: string): PemPair {
  run(
    'openssl',
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    ].concat(['-subj', `/CN=${name}`]),
    dir,
  );
  writeFileSync(join(dir, `${name}.ext`), ext);
  run(
    'openssl',
    [
      'x509',
      ...['-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`],
      ...['-CAcreateserial', '-days', '2', '-out', `${name}.pem`, '-extfile', `${name}.ext`],
    ],
    dir,
  );
  return {
    cert: readFileSync(join(dir, `${name}.pem`), 'utf8'),
    key: readFileSync(join(dir, `${name}.key`), 'utf8'),
  };
}

/** Makes a fresh set in a temporary folder (about a second of openssl and keytool). */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'zk-certs-'));
  const storePassword = 'test-store-password';
  makeCa(dir, 'test-ca');
  makeCa(dir, 'other-ca');
  const server = makeLeaf(
    dir,
    'server',
    'test-ca',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  const client = makeLeaf(dir, 'client', 'test-ca', 'extendedKeyUsage=clientAuth\n');
  const otherClient = makeLeaf(dir, 'other-client', 'test-ca', 'extendedKeyUsage=clientAuth\n');
  const untrustedClient = makeLeaf(dir, 'intruder', 'other-ca', 'extendedKeyUsage=clientAuth\n');
  run(
    'openssl',
    [
      ...['pkcs12', '-export', '-in', 'server.pem', '-inkey', 'server.key', '-certfile'],
      ...['test-ca.pem', '-name', 'server', '-out', 'server.p12'],
      ...['-passout', `pass:${storePassword}`],
    ],
    dir,
  );
  run(
    'keytool',
    [
      ...['-importcert', '-noprompt', '-alias', 'test-ca', '-file', 'test-ca.pem'],
      ...['-keystore', 'trust.p12', '-storetype', 'PKCS12', '-storepass', storePassword],
    ],
    dir,
  );
  const serverKeyStore = join(dir, 'server.p12');
  const serverTrustStore = join(dir, 'trust.p12');
  return {
    dir,
    ca: readFileSync(join(dir, 'test-ca.pem'), 'utf8'),
    otherCa: readFileSync(join(dir, 'other-ca.pem'), 'utf8'),
    server,
    client,
    otherClient,
    untrustedClient,
    serverKeyStore,
    serverTrustStore,
    storePassword,
    serverConfig: (clientAuth) => [
      'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
      `ssl.keyStore.location=${serverKeyStore}`,
      `ssl.keyStore.password=${storePassword}`,
      'ssl.keyStore.type=PKCS12',
      `ssl.trustStore.location=${serverTrustStore}`,
      `ssl.trustStore.password=${storePassword}`,
      'ssl.trustStore.type=PKCS12',
      `ssl.clientAuth=${clientAuth}`,
    ],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
