/**
 * Credentials never appear in logs, error messages or inspect() output. An
 * application with `auth` (and a TLS client key with a passphrase) runs through every event the
 * NestJS event logger writes (acquire, release, timeout, loss, disconnect, reconnect) and every
 * error path we can trigger (unreachable servers, a malformed connection string, AUTH_FAILED,
 * NOAUTH, bad options, TLS refusals); the captured log lines, the errors (message, stack,
 * util.inspect) and the inspect() results are searched for the secrets in every encoding.
 */
import { Injectable, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { inspect } from 'node:util';
import {
  DistributedLock,
  LockService,
  ZK_LOCK_CLIENT,
  ZkLockClient,
  ZkLockClientOptions,
  ZkLockModule,
} from '../../lib';
import { makeTestCertificates, TestCertificates } from '../support/certs';
import { freePort, ZooKeeperServer } from '../support/zookeeper';
import { eventually, ZkAdmin } from '../core/support/zk-admin';
import { scaled } from '../support/time-scale';
import { testNamespace } from './support/nest-app';

const SECRET = `pw-${randomBytes(8).toString('hex')}`;
const CREDENTIALS = `svc:${SECRET}`;
const PASSPHRASE = `pass-${randomBytes(8).toString('hex')}`;

/** The secrets as text, hex (a Buffer in inspect), base64; and any PEM private key. */
function expectNoSecret(text: string, where: string): void {
  const forms = [SECRET, PASSPHRASE].flatMap((s) => [
    s,
    Buffer.from(s).toString('base64'),
    Buffer.from(s).toString('hex'),
    Buffer.from(s).toString('hex').match(/../g)!.join(' '),
  ]);
  for (const form of forms) {
    if (text.includes(form)) throw new Error(`${where} contains a secret: ${text.slice(0, 300)}`);
  }
  expect(text).not.toMatch(/PRIVATE KEY/);
}

/** Everything an error shows: message, stack, causes, util.inspect at any depth. */
function expectCleanError(error: unknown, where: string): void {
  expect(error).toBeInstanceOf(Error);
  expectNoSecret(inspect(error, { depth: Infinity, showHidden: true }), `${where} (inspect)`);
  expectNoSecret(String((error as Error).stack), `${where} (stack)`);
}

class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  private put(level: string, args: unknown[]): void {
    const text = args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: Infinity })));
    this.lines.push(`${level} ${text.join(' ')}`);
  }
  log = (...args: unknown[]) => this.put('log', args);
  error = (...args: unknown[]) => this.put('error', args);
  warn = (...args: unknown[]) => this.put('warn', args);
  debug = (...args: unknown[]) => this.put('debug', args);
  verbose = (...args: unknown[]) => this.put('verbose', args);
  fatal = (...args: unknown[]) => this.put('fatal', args);
}

@Injectable()
class Orders {
  @DistributedLock('/orders/<id>', { waitTimeoutMs: 30_000 })
  async place(id: string, work: () => Promise<void>): Promise<void> {
    await work();
  }
}

async function bootApp(options: Partial<ZkLockClientOptions>, logger: CapturingLogger) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ZkLockModule.forRoot({
        connectionString: '',
        sessionTimeoutMs: 4_000,
        connectTimeoutMs: 30_000,
        auth: [CREDENTIALS],
        acl: 'creator',
        isGlobal: true,
        ...options,
      }),
    ],
    providers: [Orders],
  })
    .setLogger(logger)
    .compile();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  return app;
}

describe('credentials in a running NestJS application', () => {
  const logger = new CapturingLogger();
  const namespace = testNamespace('credentials');
  let server: ZooKeeperServer;
  let app: Awaited<ReturnType<typeof bootApp>>;
  let owner: ZkAdmin;

  beforeAll(async () => {
    server = await ZooKeeperServer.start();
    // A long session: the restart below is a reconnect of the same session even when slow.
    // Four sessions: each one's reconnect is logged, naming it.
    app = await bootApp(
      {
        connectionString: server.connectionString,
        namespace,
        sessionTimeoutMs: 30_000,
        sessions: 4,
      },
      logger,
    );
    owner = await ZkAdmin.connect(server.connectionString, 15_000, [CREDENTIALS]);
  });

  afterAll(async () => {
    server.members[0].resume();
    await app?.close();
    // The owner's connection comes back from the restart in its own time, and its client sends
    // requests queued meanwhile before its credentials (NO_AUTH): retried until it is back.
    if (owner) {
      await eventually('the namespace is removed', () =>
        owner.removeTree(namespace).then(
          () => true,
          () => false,
        ),
      );
    }
    owner?.close();
    await server?.stop();
  });

  it('logs every lock event and connection state without the credentials', async () => {
    const locks = app.get(LockService);
    const orders = app.get(Orders);
    // acquire + release (debug), a timeout (warn), an invalid path, a lost lock (error).
    await orders.place('42', async () => undefined);
    const errors: unknown[] = [];
    const client = app.get<ZkLockClient>(ZK_LOCK_CLIENT);
    const busy = await client.acquire('/busy'); // outside any withLock scope: a second one waits
    await client.acquire('/busy', { waitTimeoutMs: 50 }).catch((err) => errors.push(err));
    await busy.release();
    await locks.withLock('/bad//path', () => undefined).catch((err) => errors.push(err));
    await locks.withLock('/doomed', async (lock) => {
      lock.watchForLoss(); // observed: its node is watched
      const [node] = await owner.children(`${namespace}/doomed`);
      await owner.remove(`${namespace}/doomed/${node}`);
      await eventually('the lock is lost', () => lock.state === 'lost');
    });
    // A disconnect and a reconnect of the same session (warn).
    await server.members[0].stop();
    server.members[0].start();
    await server.members[0].waitServing();
    await eventually(
      'reconnected is logged for every session',
      // The client's 4 sessions: each says it reconnected ("Session 0 (...) reconnected").
      () => {
        const back = logger.lines.map((l) => /Session (\d+) .*reconnected to ZooKeeper/.exec(l));
        return new Set(back.flatMap((m) => (m ? [m[1]] : []))).size === 4;
      },
      scaled(30_000),
    );
    const inspection = await locks.inspect('/busy');
    expect(errors.length).toBeGreaterThanOrEqual(2);
    for (const error of errors) expectCleanError(error, 'a lock error');
    for (const level of ['verbose', 'warn', 'error']) {
      expect(logger.lines.some((l) => l.startsWith(level))).toBe(true);
    }
    expect(logger.lines.some((l) => l.includes('Lost lock "/doomed"'))).toBe(true);
    expectNoSecret(logger.lines.join('\n'), 'the log');
    expectNoSecret(JSON.stringify(inspection), 'inspect()');
    expectNoSecret(inspect(locks, { depth: 6 }), 'util.inspect(LockService)');
    expectNoSecret(inspect(client, { depth: Infinity, showHidden: true }), 'util.inspect(client)');
  });
});

describe('credentials on every error path', () => {
  let certs: TestCertificates;
  let encryptedKey: string;
  let refusing: ZooKeeperServer;
  let tlsServer: ZooKeeperServer;

  beforeAll(async () => {
    certs = makeTestCertificates();
    encryptedKey = execFileSync('openssl', [
      ...['pkey', '-in', join(certs.dir, 'client.key'), '-aes256'],
      ...['-passout', `pass:${PASSPHRASE}`],
    ]).toString();
    [refusing, tlsServer] = await Promise.all([
      ZooKeeperServer.start({ extraConfig: ['DigestAuthenticationProvider.enabled=false'] }),
      ZooKeeperServer.start({ secureClientPort: true, extraConfig: certs.serverConfig('need') }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([refusing?.stop(), tlsServer?.stop()]);
    certs?.remove();
  });

  const failure = (options: Partial<ZkLockClientOptions>): Promise<unknown> =>
    ZkLockClient.connect({
      connectionString: refusing.connectionString,
      connectTimeoutMs: 3_000,
      auth: [CREDENTIALS],
      ...options,
    }).then(
      async (client) => {
        await client.close();
        throw new Error('connected');
      },
      (err) => err,
    );

  it('connect errors: unreachable, malformed connection string, AUTH_FAILED, bad options', async () => {
    const port = await freePort();
    const cases: Array<[string, Partial<ZkLockClientOptions>, string]> = [
      ['unreachable', { connectionString: `127.0.0.1:${port}` }, 'ZooKeeperUnavailableError'],
      ['malformed', { connectionString: '127.0.0.1:2181/bad//chroot' }, 'InvalidLockOptionsError'],
      ['empty', { connectionString: '' }, 'InvalidLockOptionsError'],
      ['AUTH_FAILED', {}, 'ZooKeeperAuthFailedError'],
      ['no colon', { auth: [CREDENTIALS, SECRET] }, 'InvalidLockOptionsError'],
      ['bad acl', { acl: SECRET as 'open' }, 'InvalidLockOptionsError'],
      ['tls key', { tls: { key: encryptedKey, passphrase: `${PASSPHRASE}x` } }, ''],
    ];
    for (const [what, options, name] of cases) {
      const error = await failure(options);
      if (name) expect([what, (error as Error).name]).toEqual([what, name]);
      expectCleanError(error, what);
    }
  });

  it('NestJS bootstrap failures (unreachable, AUTH_FAILED) log no credentials', async () => {
    const cases = [
      [`127.0.0.1:${await freePort()}`, 'ZooKeeperUnavailableError'],
      [refusing.connectionString, 'ZooKeeperAuthFailedError'],
    ];
    for (const [connectionString, name] of cases) {
      const logger = new CapturingLogger();
      const error = await bootApp({ connectionString, connectTimeoutMs: 3_000 }, logger).then(
        async (app) => {
          await app.close();
          return new Error('booted');
        },
        (err) => err,
      );
      expect((error as Error).name).toBe(name);
      expectCleanError(error, `bootstrap with ${connectionString}`);
      expectNoSecret(logger.lines.join('\n'), 'the bootstrap log');
    }
  });

  it('auth without TLS: one warning at bootstrap through the Logger; with TLS none', async () => {
    const warnings = async (options: Partial<ZkLockClientOptions>): Promise<string[]> => {
      const logger = new CapturingLogger();
      const app = await bootApp({ connectTimeoutMs: 10_000, ...options }, logger);
      await app.close();
      return logger.lines.filter((l) => l.startsWith('warn') && /without tls/.test(l));
    };
    const plain = await warnings({ connectionString: process.env.ZK_CONNECT! });
    expect(plain).toHaveLength(1);
    expect(plain[0]).toMatch(/^warn auth is set without tls: .*plain bytes.*ZkLock$/);
    expectNoSecret(plain[0], 'the warning');
    const tls = { ca: certs.ca, cert: certs.client.cert, key: certs.client.key };
    expect(await warnings({ connectionString: tlsServer.secureConnectionString, tls })).toEqual([]);
  });

  it('TLS: an encrypted key with its passphrase never shows in inspect(), nor in refusals', async () => {
    const tls = {
      ca: certs.ca,
      cert: certs.client.cert,
      key: encryptedKey,
      passphrase: PASSPHRASE,
    };
    const client = await ZkLockClient.connect({
      connectionString: tlsServer.secureConnectionString,
      auth: [CREDENTIALS],
      tls,
      connectTimeoutMs: scaled(60_000), // a TLS handshake on a loaded machine can take a while
    });
    try {
      await client.withLock(`/credentials-tls/${SECRET.length}`, () => undefined);
      expectNoSecret(inspect(client, { depth: Infinity, showHidden: true }), 'inspect(tls client)');
    } finally {
      await client.close();
    }
    // Refused by the server (untrusted client certificate) and refusing the server (wrong CA).
    for (const refused of [
      { ...tls, cert: certs.untrustedClient.cert, key: certs.untrustedClient.key },
      { ...tls, ca: certs.otherCa },
    ]) {
      const error = await failure({
        connectionString: tlsServer.secureConnectionString,
        tls: refused,
      });
      expect((error as Error).name).toBe('ZooKeeperUnavailableError');
      expectCleanError(error, 'a TLS refusal');
    }
  });
});
