/**
 * One acquire, measured: a `@DistributedLock('/locks/order:<id>')` route handler called over
 * HTTP, on the in-memory ZooKeeper (the same client, socket and wire protocol as a real server).
 * Every function of `lib/` gets a logpoint (an inspector breakpoint whose condition records the
 * call and never pauses); the calls from the request to the write of the contender node's
 * `create` on the socket to ZooKeeper are printed in order, file by file, with the count of files
 * and of returns to a file already left (docs/design.md "One acquire, file by file"). Counted
 * three ways: from the request to the client layer's `create` (ZkSession.create: where Curator's
 * and kazoo's counts stop, at their client's `create`), the client layer's own walk from that
 * `create` to the socket, and the whole walk.
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
let calls: Call[] = [];
/**
 * The functions (`file fn`) whose own body branches: an `if`, a `switch` or a `?:` outside the
 * functions it defines. A leaf call of one of them decides something on the way (who may hold,
 * whether the session is ready, whether a timer is armed); a leaf without a branch only computes
 * or stores (a name, a size, an encoding). Closures of one name in one file count together.
 */
const deciding = new Set<string>();
let recording: 'decoration' | 'run' | false = false;

/**
 * Recorded from the request's first call into lib/nest; timers (the session clock) and the
 * in-memory server's side are not the acquire. The stack (async frames included) tells which
 * files are still running below the call: entering one of them again is the caller going on
 * after a call returned, not a return to a file already left.
 */
(globalThis as Record<string, unknown>).__acquirePath = (where: string) => {
  if (!recording || where.startsWith(`lib${sep}core${sep}testing${sep}`)) return;
  if (recording === 'run' && calls.length === 0 && !where.startsWith(`lib${sep}nest${sep}`)) return;
  const stack = new Error().stack ?? '';
  if (/listOnTimeout|processTimers/.test(stack)) return;
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
      let name = owner;
      if (ts.isClassDeclaration(node) || ts.isClassExpression(node))
        name = node.name?.text ?? owner;
      const body =
        (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) || undefined;
      // Not on a super() call: V8 would run it twice. An arrow's expression body: on it.
      const first =
        body && ts.isBlock(body) ? body.statements.find((st) => !isSuperCall(st)) : body;
      if (first) {
        const fn = functionName(node, owner);
        if (body && branches(body)) deciding.add(`${file} ${fn}`);
        const at = source.getLineAndCharacterOfPosition(first.getStart(source));
        const where = JSON.stringify(`${file} ${fn}`);
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

/** Whether a function body has a branch of its own (not in the functions it defines). */
function branches(body: ts.Node): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found || (node !== body && ts.isFunctionLike(node))) return;
    if (ts.isIfStatement(node) || ts.isSwitchStatement(node) || ts.isConditionalExpression(node))
      found = true;
    else ts.forEachChild(node, visit);
  };
  visit(body);
  return found;
}

function isSuperCall(statement: ts.Statement): boolean {
  return (
    ts.isExpressionStatement(statement) &&
    ts.isCallExpression(statement.expression) &&
    statement.expression.expression.kind === ts.SyntaxKind.SuperKeyword
  );
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
  const { Controller, Module, Param, Post } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  const { DistributedLock, ZkLockModule } = await import('../lib');
  const { InMemoryZooKeeper } = await import('../lib/testing');
  // The walk ends where the create leaves the process: the first socket write that carries the
  // contender node's path (however the request was encoded).
  const { Socket } = await import('node:net');
  const write = Socket.prototype.write as (this: NetSocket, ...args: unknown[]) => boolean;
  Socket.prototype.write = function (this: NetSocket, ...args: unknown[]) {
    const chunk = args[0];
    if (recording && Buffer.isBuffer(chunk) && chunk.includes('/locks/order:42/_c_')) {
      recording = false;
    }
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

  recording = 'decoration';
  @Controller('orders')
  class OrdersController {
    @Post(':id')
    @DistributedLock('/locks/order:<id>')
    update(@Param('id') id: string) {
      return { id };
    }
  }
  recording = false;
  console.log('Decoration time (the class is defined):');
  report(calls, points);
  calls = [];

  const server = await InMemoryZooKeeper.start();
  @Module({
    imports: [ZkLockModule.forRoot({ connectionString: server.connectionString })],
    controllers: [OrdersController],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  try {
    recording = 'run';
    const res = await fetch(`${await app.getUrl()}/orders/42`, { method: 'POST' });
    if (!res.ok) throw new Error(`POST /orders/42: ${res.status} ${await res.text()}`);
  } finally {
    recording = false;
    session.disconnect();
    await app.close();
    await server.close();
  }
  console.log('Run time (POST /orders/42, up to the create of the contender node):');
  reportRun(calls, points);
}

/** The client layer's entry: where the engine hands the create over (Curator: client.create()). */
const CREATE = { file: `lib${sep}core${sep}zookeeper${sep}zk-session.ts`, fn: 'ZkSession.create' };

/**
 * The run-time walk split at the first ZkSession.create: the request to that create (the create
 * call included), then the client layer's walk from it to the socket, each counted on its own,
 * then the whole walk. Every walk's main line keeps its final call: the create, or the call
 * that writes to the socket.
 */
function reportRun(calls: readonly Call[], points: number): void {
  const at = calls.findIndex((c) => c.file === CREATE.file && c.fn === CREATE.fn);
  if (at < 0) throw new Error(`no call of ${CREATE.fn}: the walk did not reach the client layer`);
  const toCreate = calls.slice(0, at + 1);
  const fromCreate = calls.slice(at);
  console.log(
    `\n== 1. The request to the client layer's create (${CREATE.fn}, the call included):`,
  );
  report(toCreate, points);
  console.log(`\n== 2. The client layer: ${CREATE.fn} to the socket write (counted on its own):`);
  report(fromCreate, points);
  console.log('\n== 3. The whole walk, the request to the socket write:');
  report(calls, points);
  const figures = (part: readonly Call[]) => {
    const all = walk(part, false);
    const main = walk(descendingCalls(part), false);
    const deciding = walk(decidingLine(part), false);
    const returns = (w: ReturnType<typeof walk>) => w.returns + w.callbacks;
    return (
      `${all.files} files, ${returns(all)} returns (main line ${main.files} files, ` +
      `${returns(main)} returns; main line plus deciding leaves ${deciding.files} files, ` +
      `${returns(deciding)} returns)`
    );
  };
  console.log(
    `\nSummary: to ${CREATE.fn}: ${figures(toCreate)}; ${CREATE.fn} to the socket: ` +
      `${figures(fromCreate)}; whole walk: ${figures(calls)}`,
  );
}

/**
 * Prints the calls file by file, marking each entry into a file already left: `<-` a return to it
 * (its functions had all finished: a later call into it), `<~` a call back into it from another
 * file while one of its functions still runs (a callback it passed down); both count. `^` is the
 * file's own code going on after a call into another file returned: not a return. Then the main
 * line: the same walk without its leaf calls, ending at the walk's final call (docs/design.md
 * "One acquire, file by file"); then the main line plus the leaf calls that decide something.
 */
function report(calls: readonly Call[], points: number): void {
  const all = walk(calls, true);
  console.log(
    `Full walk: ${calls.length} calls in ${all.files} files, ${all.returns + all.callbacks} ` +
      `returns to a file already left (${all.callbacks} of them calls back) (${points} logpoints ` +
      'in lib/)',
  );
  const descending = descendingCalls(calls);
  const main = walk(descending, false);
  console.log(
    'Main line (the files control descends through: the walk above without its leaf calls, the ' +
      'calls that return without calling into another lib/ file; ending at the final call, ' +
      `${calls[calls.length - 1].fn}):`,
  );
  for (const entry of main.order) console.log(entry);
  console.log(
    `Main line: ${descending.length} calls in ${main.files} files, ` +
      `${main.returns + main.callbacks} returns to a file already left ` +
      `(${main.callbacks} of them calls back); the full walk above counts its leaf calls too`,
  );
  const line = decidingLine(calls);
  const kept = new Set(descending);
  const leaves = line.filter((c) => !kept.has(c)).map((c) => `${c.file} ${c.fn}`);
  const withLeaves = walk(line, false);
  console.log(
    'Main line plus the leaves that decide something (a leaf call whose function branches: ' +
      `${[...new Set(leaves)].join(', ') || 'none'}): ${withLeaves.files} files, ` +
      `${withLeaves.returns + withLeaves.callbacks} returns to a file already left`,
  );
}

/** The main line with the leaf calls whose functions branch, and the calls they are made through. */
function decidingLine(calls: readonly Call[]): Call[] {
  return descendingCalls(calls, (c) => deciding.has(`${c.file} ${c.fn}`));
}

/** Walks the calls file by file, counting files and returns; prints them when `print`. */
function walk(calls: readonly Call[], print: boolean) {
  let previous = '';
  const files = new Set<string>();
  const order: string[] = [];
  let returns = 0;
  let callbacks = 0;
  for (const { file, fn, callers, caller } of calls) {
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
      files.add(file);
      previous = file;
      order.push(`${mark}${file}`);
      if (print) console.log(`${mark}${file}`);
    }
    if (print) console.log(`      ${fn}`);
  }
  return { files: files.size, returns, callbacks, order };
}

/**
 * The calls that hand control on into another lib/ file, directly or through a call of their
 * own file that does, and the final call (where the walk ends: the create, the socket write)
 * with the calls it is made through: what is left without the leaf calls (and the calls `kept`
 * keeps, with theirs). A call's caller is the latest call before it in the file its stack names
 * below it.
 */
function descendingCalls(
  calls: readonly Call[],
  kept: (call: Call) => boolean = () => false,
): Call[] {
  const parent = calls.map((call, j) => {
    for (let i = j - 1; i >= 0; i--) if (calls[i].file === call.caller) return i;
    return -1;
  });
  const descends = calls.map((call, j) => j === calls.length - 1 || kept(call));
  for (let j = calls.length - 1; j >= 0; j--) {
    const i = parent[j];
    if (i >= 0 && (descends[j] || calls[j].file !== calls[i].file)) descends[i] = true;
  }
  return calls.filter((_, j) => descends[j]);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
