/**
 * One lock, measured: a `@DistributedLock('/locks/order:<id>')` route handler called over HTTP,
 * on the in-memory ZooKeeper (the same client, socket and wire protocol as a real server).
 * Every function of `lib/` gets a logpoint (an inspector breakpoint whose condition records the
 * call and never pauses), and four walks are printed call by call, file by file, with their
 * counts (docs/design.md "One lock, file by file"):
 * - decoration: while the controller class is defined;
 * - grant: `POST /orders/42`, from the request's first call into `lib/` until the handler body
 *   runs (the first acquire of a new path: the lock path is created on the way);
 * - release: from the decorated method's return until its answer is written to the HTTP socket
 *   (the answer waits for the release's reply);
 * - loss: a holder whose session the server expires, from the expiry until the holder's signal
 *   aborts (the client learns it on reconnect).
 * Run: `npx ts-node --transpile-only scripts/acquire-path.ts`.
 */
import 'reflect-metadata';
import { Session } from 'node:inspector';
import { relative, sep } from 'node:path';
import type { Socket as NetSocket } from 'node:net';
import ts from 'typescript';

const root = relative(process.cwd(), `${__dirname}/..`) || '.';
/** One call into a lib/ function: its file and name, and the lib/ files still running below it. */
interface Call {
  readonly file: string;
  readonly fn: string;
  /** The lib/ files of the functions still running below this one (async frames included). */
  readonly callers: ReadonlySet<string>;
  /** The file of the nearest lib/ function below: the one that called this one. */
  readonly caller: string | undefined;
}
type Walk = 'decoration' | 'grant' | 'release' | 'loss';
const TITLES: Record<Walk, string> = {
  decoration: 'Decoration (the controller class is defined)',
  grant: 'Grant (POST /orders/42: the request until the handler body runs)',
  release: "Release (the decorated method's return until its answer is written)",
  loss: "Loss (the server expires the holder's session until the holder's signal aborts)",
};
const walks = new Map<Walk, Call[]>();
let recording: Walk | undefined;

function start(walk: Walk): void {
  walks.set(walk, []);
  recording = walk;
}

function stop(walk: Walk): void {
  if (recording === walk) recording = undefined;
}

/** How many callbacks of timers armed during the walk under way are running now. */
let ownTimers = 0;
const armTimer = globalThis.setTimeout;
/**
 * A timer armed during a walk is one of its steps (the reconnect that learns of an expiry waits
 * on one); a timer armed before it (a ping, the session clock's tick, a cleanup) is not.
 */
globalThis.setTimeout = Object.assign((fn: (...args: unknown[]) => void, ...rest: unknown[]) => {
  const walk = recording;
  if (!walk) return armTimer(fn, ...(rest as [number]));
  const step = (...args: unknown[]): void => {
    const own = recording === walk;
    if (own) ownTimers++;
    try {
      fn(...args);
    } finally {
      if (own) ownTimers--;
    }
  };
  return armTimer(step, ...(rest as [number]));
}, armTimer) as typeof setTimeout;

/**
 * The in-memory server's side (lib/core/testing) is not the client's walk, nor are timers armed
 * before it. The stack (async frames included) tells which files are still running below the
 * call: entering one of them again is the caller going on after a call returned, not a return to
 * a file already left.
 */
(globalThis as Record<string, unknown>).__acquirePath = (where: string) => {
  if (!recording || where.startsWith(`lib${sep}core${sep}testing${sep}`)) return;
  const calls = walks.get(recording)!;
  if (recording === 'grant' && calls.length === 0 && !where.startsWith(`lib${sep}nest${sep}`))
    return;
  const stack = new Error().stack ?? '';
  if (ownTimers === 0 && /listOnTimeout|processTimers/.test(stack)) return;
  const [file, fn] = where.split(' ');
  const frames = [...stack.matchAll(/\(?(\/[^\s()]+\.ts):\d+:\d+\)?$/gm)]
    .map((m) => relative(root, m[1]))
    .filter((f) => f.startsWith(`lib${sep}`));
  // frames[0] is the function the logpoint is in.
  calls.push({ file, fn, callers: new Set(frames.slice(1)), caller: frames[1] });
};

function post<T>(session: Session, method: string, params: object = {}): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

/** A logpoint at the start of every function body of every loaded `lib/` file. */
async function traceLib(session: Session, scripts: { id: string; url: string }[]): Promise<number> {
  let points = 0;
  for (const { id, url } of scripts) {
    const file = relative(root, url.replace(/^file:\/\//, ''));
    if (!file.startsWith(`lib${sep}`) || file.includes('.spec.')) continue;
    const { scriptSource } = await post<{ scriptSource: string }>(
      session,
      'Debugger.getScriptSource',
      { scriptId: id },
    );
    const source = ts.createSourceFile(file, scriptSource, ts.ScriptTarget.ES2022, true);
    const visit = async (node: ts.Node, owner: string): Promise<void> => {
      if (emitted(node)) return;
      let name = owner;
      if (ts.isClassDeclaration(node) || ts.isClassExpression(node))
        name = node.name?.text ?? owner;
      const body =
        (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) || undefined;
      // Not on a statement that calls super() (SWC writes `super(), this.x = x;`): V8 would run
      // the call twice. An arrow's expression body: on it.
      const first = body && ts.isBlock(body) ? body.statements.find((st) => !callsSuper(st)) : body;
      if (first) {
        const where = JSON.stringify(`${file} ${functionName(node, owner)}`);
        const at = source.getLineAndCharacterOfPosition(first.getStart(source));
        await post(session, 'Debugger.setBreakpoint', {
          location: { scriptId: id, lineNumber: at.line, columnNumber: at.character },
          condition: `globalThis.__acquirePath(${where}), false`,
        }).then(
          () => points++,
          () => undefined,
        );
      }
      for (const child of node.getChildren(source)) await visit(child, name);
    };
    await visit(source, '');
  }
  return points;
}

/**
 * Code the compiler adds, not in lib/'s sources: a module's export getters (SWC's
 * `_export(exports, { get x() {...} })`, `Object.defineProperty(exports, 'x', { get })`), read at
 * every use of an imported name, and its helpers (`_ts_decorate`, `__decorate`, ...).
 */
function emitted(node: ts.Node): boolean {
  if (ts.isCallExpression(node)) {
    const callee = node.expression.getText();
    const target = node.arguments[0]?.getText();
    return target === 'exports' && (callee === '_export' || callee === 'Object.defineProperty');
  }
  const named = ts.isFunctionDeclaration(node) || ts.isVariableDeclaration(node);
  return named && node.name !== undefined && /^_/.test(node.name.getText());
}

/** Whether a statement calls super() itself (not in a function it defines). */
function callsSuper(statement: ts.Statement): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found || ts.isFunctionLike(node)) return;
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword)
      found = true;
    else ts.forEachChild(node, visit);
  };
  visit(statement);
  return found;
}

function functionName(node: ts.Node, owner: string): string {
  const named = (node as { name?: ts.Node }).name;
  const own =
    named && (ts.isIdentifier(named) || ts.isPrivateIdentifier(named)) ? named.text : undefined;
  if (ts.isConstructorDeclaration(node)) return `${owner}.constructor`;
  if (own) return owner && !ts.isFunctionDeclaration(node) ? `${owner}.${own}` : own;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name))
    return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name))
    return parent.name.text;
  return `${owner ? `${owner}.` : ''}<closure>`;
}

async function main(): Promise<void> {
  // Loaded before the logpoints are set: they go into every lib/ file loaded by then.
  const { Controller, Inject, Module, Param, Post } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  const { DistributedLock, LockService, ZkLockModule } = await import('../lib');
  const { InMemoryZooKeeper } = await import('../lib/testing');
  // The release ends where the answer leaves the process: the HTTP response's first write.
  const { Socket } = await import('node:net');
  const write = Socket.prototype.write as (this: NetSocket, ...args: unknown[]) => boolean;
  Socket.prototype.write = function (this: NetSocket, ...args: unknown[]) {
    const chunk = args[0];
    if (typeof chunk === 'string' ? chunk.startsWith('HTTP/') : false) stop('release');
    return write.apply(this, args);
  } as typeof Socket.prototype.write;

  const session = new Session();
  session.connect();
  const scripts: { id: string; url: string }[] = [];
  session.on('Debugger.scriptParsed', ({ params }) =>
    scripts.push({ id: params.scriptId, url: params.url }),
  );
  await post(session, 'Debugger.enable');
  const points = await traceLib(session, scripts);

  start('decoration');
  @Controller('orders')
  class OrdersController {
    @Post(':id')
    @DistributedLock('/locks/order:<id>')
    update(@Param('id') id: string) {
      stop('grant');
      start('release');
      return { id };
    }
  }
  stop('decoration');

  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  /** A route that holds its lock until it is lost. */
  @Controller('held-orders')
  class HeldOrdersController {
    constructor(@Inject(LockService) private readonly locks: InstanceType<typeof LockService>) {}

    @Post(':id')
    @DistributedLock('/locks/order:<id>')
    async hold(@Param('id') id: string) {
      const signal = this.locks.current(`/locks/order:${id}`)!.signal;
      await new Promise((resolve) => {
        signal.addEventListener('abort', () => resolve(stop('loss')), { once: true });
        holding();
      });
    }
  }

  const server = await InMemoryZooKeeper.start();
  try {
    @Module({
      imports: [ZkLockModule.forRoot({ connectionString: server.connectionString })],
      controllers: [OrdersController, HeldOrdersController],
    })
    class AppModule {}
    const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    try {
      await app.listen(0, '127.0.0.1');
      const url = await app.getUrl();
      start('grant');
      const res = await fetch(`${url}/orders/42`, { method: 'POST' });
      if (!res.ok) throw new Error(`POST /orders/42: ${res.status} ${await res.text()}`);
      if (recording) throw new Error(`the ${recording} walk did not end`);

      const answer = fetch(`${url}/held-orders/43`, { method: 'POST' });
      await held;
      // The grant's own requests (the watch its signal arms) are answered before the expiry.
      await new Promise((resolve) => setTimeout(resolve, 200));
      start('loss');
      server.expireSessions();
      await answer; // 503: the handler's lock was lost
      if (recording) throw new Error(`the ${recording} walk did not end`);
    } finally {
      recording = undefined;
      session.disconnect();
      await app.close();
    }
  } finally {
    await server.close();
  }

  const figures = [...walks].map(([walk, calls]) => {
    console.log(`\n== ${TITLES[walk]}`);
    return { walk, ...walkFiles(calls) };
  });
  console.log(`\n${points} logpoints in lib/. Returns: entries into a file already left.\n`);
  console.log('| walk | files | calls | functions | returns (calls back; outside zookeeper/) |');
  console.log('|---|---|---|---|---|');
  for (const f of figures) {
    console.log(
      `| ${f.walk} | ${f.files} | ${f.calls} | ${f.functions} | ` +
        `${f.returns + f.callbacks} (${f.callbacks}; ${f.outsideZooKeeper}) |`,
    );
  }
}

/**
 * Prints the calls file by file and counts files, calls, functions and returns, marking each entry into a file already left: `<-` a return to it (its functions had
 * all finished: a later call into it), `<~` a call back into it from another file while one of
 * its functions still runs (a callback it passed down); both count as returns. `^` is the
 * file's own code going on after a call into another file returned: not a return.
 */
function walkFiles(calls: readonly Call[]) {
  let previous = '';
  const files = new Set<string>();
  const functions = new Set<string>();
  let returns = 0;
  let callbacks = 0;
  let outsideZooKeeper = 0;
  for (const { file, fn, callers, caller } of calls) {
    functions.add(`${file} ${fn}`);
    if (file !== previous) {
      let mark = '   ';
      if (files.has(file) && !callers.has(file)) {
        mark = '<- ';
        returns++;
      } else if (files.has(file) && caller !== file) {
        mark = '<~ ';
        callbacks++;
      } else if (files.has(file)) {
        mark = ' ^ ';
      }
      const returned = mark !== '   ' && mark !== ' ^ ';
      if (returned && !file.startsWith(`lib${sep}core${sep}zookeeper${sep}`)) outsideZooKeeper++;
      files.add(file);
      previous = file;
      console.log(`${mark}${file}`);
    }
    console.log(`      ${fn}`);
  }
  const figures = {
    files: files.size,
    calls: calls.length,
    functions: functions.size,
    returns,
    callbacks,
    outsideZooKeeper,
  };
  console.log(
    `${figures.calls} calls into ${figures.functions} functions in ${figures.files} files; ` +
      `${returns + callbacks} returns to a file already left (${callbacks} of them calls ` +
      `back, ${outsideZooKeeper} outside lib/core/zookeeper/)`,
  );
  return figures;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
