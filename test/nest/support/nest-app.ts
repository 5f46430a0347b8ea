import { INestApplication, Logger, LoggerService, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { LockEvents, LockService, ZkLockModule, ZkLockModuleOptions } from '../../../lib';
import { scaled } from '../../support/time-scale';
import { ZkAdmin } from '../../core/support/zk-admin';

/** The namespaces this test file asked for: removed after its last test (see below). */
const namespaces = new Set<string>();

/**
 * A root path of its own for each test file: `/test-<file>-<random>`. The client creates it as a
 * persistent node that nothing of the library removes, so the file removes it after its tests.
 */
export function testNamespace(file: string): string {
  const namespace = `/test-${file}-${randomUUID().slice(0, 8)}`;
  namespaces.add(namespace);
  return namespace;
}

// Registered when a test file imports this module: after the file's last test and its hooks.
afterAll(async () => {
  if (namespaces.size === 0) return;
  const admin = await ZkAdmin.connect(zkConnect());
  try {
    for (const namespace of namespaces) await admin.removeTree(namespace);
  } finally {
    admin.close();
  }
});

export function zkConnect(): string {
  const connect = process.env.ZK_CONNECT;
  if (!connect)
    throw new Error(
      'ZK_CONNECT is not set: run through the test runner (its global setup starts ZooKeeper)',
    );
  return connect;
}

/** A Nest application with ZkLockModule (global) on the test ZooKeeper, initialized, not listening. */
export async function createLockApp(
  metadata: ModuleMetadata,
  options: Partial<ZkLockModuleOptions> & { namespace: string },
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    ...metadata,
    imports: [
      ZkLockModule.forRoot({
        connectionString: zkConnect(),
        sessionTimeoutMs: scaled(4000), // sessions must survive the test on a loaded machine
        isGlobal: true,
        ...options,
      }),
      ...(metadata.imports ?? []),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  return app;
}

/** What `useLockApp` gives a describe block; filled in by its beforeAll. */
export interface LockAppFixture {
  app: INestApplication;
  locks: LockService;
  /** The 'acquired' events of the current test (emptied before each test). */
  readonly acquired: LockEvents['acquired'][];
}

/**
 * For the enclosing describe block: a `createLockApp` application booted before its tests and
 * closed after them, with its 'acquired' events recorded.
 */
export function useLockApp(
  metadata: ModuleMetadata,
  options: Partial<ZkLockModuleOptions> & { namespace: string },
): LockAppFixture {
  const fixture = { acquired: [] as LockEvents['acquired'][] } as LockAppFixture;
  const onAcquired = (event: LockEvents['acquired']) => fixture.acquired.push(event);
  beforeAll(async () => {
    fixture.app = await createLockApp(metadata, options);
    fixture.locks = fixture.app.get(LockService);
    fixture.locks.on('acquired', onAcquired);
  });
  beforeEach(() => (fixture.acquired.length = 0));
  afterAll(async () => {
    fixture.locks?.off('acquired', onAcquired);
    await fixture.app?.close();
  });
  return fixture;
}

/** A promise the test opens by hand, to keep a handler inside its lock. */
export class Gate {
  readonly opened: Promise<void>;
  open!: () => void;

  constructor() {
    this.opened = new Promise<void>((resolve) => (this.open = resolve));
  }
}

/** Polls `check` until it returns true; fails with `what` after `timeoutMs`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = scaled(60_000),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A line Nest's Logger was given, as `captureLogs` records it. */
export interface LogLine {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  context: string | undefined;
  message: string;
  /** Whether a stack trace came with it (Nest passes it as the argument before the context). */
  stack: boolean;
}

/**
 * A LoggerService that records every line it is given, whatever its level, into `lines`. Nest
 * calls `error(message, stack?, context?)` and the other levels `(message, context?)`.
 */
export function capturingLogger(lines: LogLine[]): LoggerService {
  const record =
    (level: LogLine['level']) =>
    (message: unknown, ...rest: unknown[]): void => {
      const context = rest.length > 0 ? String(rest[rest.length - 1]) : undefined;
      const stack =
        message instanceof Error ||
        (level === 'error' && rest.length > 1 && typeof rest[0] === 'string');
      lines.push({ level, context, message: String(message), stack });
    };
  return {
    log: record('log'),
    error: record('error'),
    warn: record('warn'),
    debug: record('debug'),
    verbose: record('verbose'),
    fatal: record('fatal'),
  };
}

/** Records every line given to Nest's static Logger from now until `restore()`. */
export function captureLogs(): { lines: LogLine[]; restore(): void } {
  const lines: LogLine[] = [];
  Logger.overrideLogger(capturingLogger(lines));
  return { lines, restore: () => Logger.overrideLogger(['error']) };
}
