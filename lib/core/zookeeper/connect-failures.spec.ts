import * as net from 'node:net';
import { createServer, Server } from 'node:tls';
import type { ConnectFailure } from '../errors';
import { makeTestCertificates, TestCertificates } from '../../../test/support/certs';
import { describeTlsFailure, refusedForGood } from './connect-failures';
import { ZkCredentials } from './zk-credentials';
import { ZkWire } from './zk-wire';

/** A ConnectResponse frame: protocolVersion, timeOut, sessionId, passwd (jute). */
function connectResponse(timeoutMs: number): Buffer {
  const body = Buffer.alloc(4 + 4 + 8 + 4 + 16);
  body.writeInt32BE(timeoutMs, 4);
  body.writeBigInt64BE(0x1234n, 8);
  body.writeInt32BE(16, 16);
  const frame = Buffer.alloc(4);
  frame.writeInt32BE(body.length);
  return Buffer.concat([frame, body]);
}

describe('the wire over TLS', () => {
  let certs: TestCertificates;
  let server: Server;
  let port: number;
  const received: Buffer[] = [];

  beforeAll(async () => {
    certs = makeTestCertificates();
    // A stand-in ZooKeeper speaking TLS: answers the first frame with a ConnectResponse.
    server = createServer({ cert: certs.server.cert, key: certs.server.key }, (socket) => {
      socket.once('data', (data) => {
        received.push(data);
        socket.write(connectResponse(30_000));
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    certs.remove();
  });

  /** A wire to the stand-in, trusting `ca`; resolves `connected` on its handshake. */
  const wireOn = (ca: string, failures: ConnectFailure[]) => {
    let connected!: () => void;
    const handshake = new Promise<void>((resolve) => (connected = resolve));
    const credentials = ZkCredentials.from({ tls: { ca } });
    const wire = new ZkWire({
      target: { servers: [{ host: '127.0.0.1', port }] },
      sessionTimeoutMs: 30_000,
      tlsOptions: (server) => credentials.tlsOptions(server),
      authPackets: [],
      handlers: {
        connected: () => connected(),
        disconnected: () => undefined,
        expired: () => undefined,
        authFailed: () => undefined,
        answered: () => undefined,
        socketFailed: (err, at, secured) => failures.push(describeTlsFailure(err, at, secured)),
        mayConnect: () => failures.length === 0,
        ended: () => undefined,
      },
    });
    return { wire, handshake };
  };

  it('connects over TLS: the ConnectRequest arrives decrypted and the session is connected', async () => {
    const failures: ConnectFailure[] = [];
    const { wire, handshake } = wireOn(certs.ca, failures);
    wire.start();
    await handshake;
    // ConnectRequest: length 45 (its last byte readOnly false), timeout 30000 at offset 16.
    expect(received[0].readInt32BE(0)).toBe(45);
    expect(received[0][48]).toBe(0);
    expect(received[0].readInt32BE(16)).toBe(30_000);
    expect(failures).toEqual([]);
    expect(wire.connected).toBe(true);
    wire.end();
  });

  it('tells why a handshake failed (a server certificate it does not trust)', async () => {
    const failures: ConnectFailure[] = [];
    const { wire } = wireOn(certs.otherCa, failures);
    const failed = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (failures.length === 0) return;
        clearInterval(check);
        resolve();
      }, 10);
    });
    wire.start();
    await failed;
    wire.end();
    // This stand-in sends its certificate without the chain: "unable to verify".
    expect(failures[0].reason).toMatch(
      /^TLS: the certificate of ZooKeeper server 127\.0\.0\.1:\d+ is not trusted \(UNABLE_TO_VERIFY_LEAF_SIGNATURE/,
    );
    expect(failures[0].hint).toMatch(/tls\.ca/);
  });
});

describe('describeTlsFailure', () => {
  const at = { host: 'zk1', port: 2281 };
  const err = (code: string): Error & { code: string } =>
    Object.assign(new Error(`${code} happened\nsecond line`), { code });

  it.each([
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', true, /not trusted/, /tls\.ca/, true],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', true, /not trusted/, /tls\.ca/, true],
    ['CERT_HAS_EXPIRED', true, /not valid now/, /Renew/, true],
    ['ERR_TLS_CERT_ALTNAME_INVALID', true, /does not name "zk1"/, /tls\.servername/, true],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', true, /refused the handshake/, /tls\.cert/, true],
    ['ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', false, /refused the handshake/, /tls\.cert/, true],
    // Node 24+ (OpenSSL 3.5) spells the alert's code with a slash.
    [
      'ERR_SSL_SSL/TLS_ALERT_CERTIFICATE_UNKNOWN',
      false,
      /refused the handshake/,
      /tls\.cert/,
      true,
    ],
    ['ECONNREFUSED', false, /before the handshake completed/, /secureClientPort/, false],
    ['ECONNRESET', false, /before the handshake completed/, /secureClientPort/, false],
    ['ECONNRESET', true, /zk1:2281 failed/, /ssl\.\*/, false],
  ])('%s (handshake done: %s)', (code, secured, reason, hint, forGood) => {
    expect(refusedForGood(err(code))).toBe(forGood);
    const failure = describeTlsFailure(err(code), at, secured);
    expect(failure.reason).toMatch(reason);
    expect(failure.reason).toContain(`${code}: ${code} happened`);
    expect(failure.reason).not.toContain('second line');
    expect(failure.hint).toMatch(hint);
  });
});
