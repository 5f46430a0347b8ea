import * as net from 'node:net';
import { createServer, Server, TLSSocket, connect as tlsConnect } from 'node:tls';
import * as zookeeper from './zk-client';
import type { ConnectFailure } from '../errors';
import { makeTestCertificates, TestCertificates } from '../../../test/support/certs';
import { describeTlsFailure, refusedForGood, useTlsSockets } from './tls-connect';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const ConnectionManager = require('node-zookeeper-client/lib/ConnectionManager.js');

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

describe('useTlsSockets (TLS for node-zookeeper-client)', () => {
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

  it('mirrors the installed ConnectionManager.prototype.connect step by step', () => {
    // If node-zookeeper-client changes how it opens sockets, the mirror must be revisited.
    const source: string = ConnectionManager.prototype.connect.toString();
    for (const step of [
      'self.setState(STATES.CONNECTING)',
      'self.findNextServer(function (server)',
      'self.socket = net.connect(server)',
      'self.onSocketConnectTimeout.bind(self)',
      'self.connectTimeout',
      'self.socket.setNoDelay()',
      "self.socket.on('connect', self.onSocketConnected.bind(self))",
      "self.socket.on('data', self.onSocketData.bind(self))",
      "self.socket.on('drain', self.onSocketDrain.bind(self))",
      "self.socket.on('close', self.onSocketClosed.bind(self))",
      "self.socket.on('error', self.onSocketError.bind(self))",
    ]) {
      expect(source).toContain(step);
    }
    expect(source.match(/self\.socket\.on\(/g)).toHaveLength(5);
  });

  const clientOn = (
    ca: string,
    failures: ConnectFailure[],
  ): { client: zookeeper.Client; sockets: TLSSocket[]; stop(): void } => {
    const client = zookeeper.createClient(`127.0.0.1:${port}`, {
      sessionTimeout: 30_000,
      spinDelay: 10,
    });
    const cm = client.connectionManager;
    // Stops reconnecting once the test is done (as ZkSession does after close).
    let stopped = false;
    const findNextServer = cm.findNextServer;
    cm.findNextServer = (cb: (server: unknown) => void) =>
      findNextServer.call(cm, (server: unknown) => !stopped && cb(server));
    const stop = (): void => {
      stopped = true;
      cm.state = ConnectionManager.STATES.CLOSING;
      cm.socket?.destroy();
    };
    const sockets: TLSSocket[] = [];
    useTlsSockets(
      cm,
      (s) => {
        const socket = tlsConnect({ host: s.host, port: Number(s.port), ca });
        sockets.push(socket);
        return socket;
      },
      (failure) => failures.push(failure),
    );
    return { client, sockets, stop };
  };

  it('connects over TLS: the ConnectRequest arrives decrypted and the session is connected', async () => {
    const failures: ConnectFailure[] = [];
    const { client, sockets, stop } = clientOn(certs.ca, failures);
    const connected = new Promise<void>((resolve) => client.once('connected', resolve));
    client.connect();
    await connected;
    expect(sockets[0]).toBeInstanceOf(TLSSocket);
    expect(sockets[0].authorized).toBe(true);
    // ConnectRequest: length 44, protocol version 0, timeout 30000 at offset 16.
    expect(received[0].readInt32BE(0)).toBe(44);
    expect(received[0].readInt32BE(16)).toBe(30_000);
    expect(failures).toEqual([]);
    // Only this instance was changed: the prototype and the net module are untouched.
    expect(client.connectionManager.connect).not.toBe(ConnectionManager.prototype.connect);
    expect(ConnectionManager.prototype.connect.toString()).toContain('net.connect(server)');
    expect(net.connect.name).toBe('connect');
    stop();
  });

  it('tells why a handshake failed (a server certificate it does not trust)', async () => {
    const failures: ConnectFailure[] = [];
    const { client, stop } = clientOn(certs.otherCa, failures);
    const failed = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (failures.length === 0) return;
        clearInterval(check);
        resolve();
      }, 10);
    });
    client.connect();
    await failed;
    stop();
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
