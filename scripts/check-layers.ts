/**
 * `npm run lint` runs it: the folders of lib/ are layers, imports run one way (type-only ones
 * included), and no two files import each other, even through others. Layers, lowest first
 * (docs/design.md "The architecture, folder by folder"):
 *
 *   core (errors, types, paths, events)  <-  core/zookeeper  <-  core/engine  <-  core/recipes  <-  core/client
 *   core/telemetry and core/testing sit beside them; core/index.ts, lib/index.ts and the NestJS
 *   layer (lib/nest, lib/testing) on top. The NestJS layer reaches the core through the client's
 *   public API: never the engine, the wire or a recipe's internals.
 *
 * Exits 1 naming every import that goes the wrong way and every cycle.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

const ROOT = resolve(__dirname, '..');
const LIB = join(ROOT, 'lib');

/** The layers a layer may import from (besides itself). */
const BELOW: Record<string, readonly string[]> = {
  core: [],
  'core/zookeeper': ['core'],
  'core/engine': ['core', 'core/zookeeper'],
  'core/recipes': ['core', 'core/zookeeper', 'core/engine'],
  'core/client': ['core', 'core/zookeeper', 'core/engine', 'core/recipes'],
  'core/telemetry': ['core'],
  'core/testing': ['core', 'core/zookeeper'],
  'core/index': ['core', 'core/engine', 'core/client', 'core/recipes', 'core/telemetry'],
  nest: ['core', 'core/index', 'core/client', 'core/recipes', 'core/engine', 'core/telemetry'],
  testing: ['core', 'core/index', 'core/client', 'core/testing', 'nest'],
  index: ['core/index', 'nest'],
};

/**
 * The files of those layers the NestJS layer may import: the public API, what it is built from,
 * and client-internals (read-only diagnostics: no lock is taken through it).
 */
const NEST_REACHES = [
  /^core\/[a-z-]+$/,
  /^core\/client\/(lock-client|client-options|client-internals)$/,
  /^core\/recipes\/(leader-latch|election-types)$/,
  /^core\/telemetry\//,
];

/** A file's layer: its folder under lib/, core's own files and the entries apart. */
function layerOf(file: string): string {
  if (file === 'index') return 'index';
  if (file === 'core/index') return 'core/index';
  const parts = file.split('/');
  if (parts[0] !== 'core') return parts[0];
  return parts.length === 2 ? 'core' : `core/${parts[1]}`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** `file`'s imports inside lib/, as paths relative to lib/ without `.ts`. */
function importsOf(path: string, lib: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(path, 'utf8'), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => {
      const target = resolve(dirname(path), name);
      const asFile = statSafe(`${target}.ts`) ? target : join(target, 'index');
      return relative(lib, asFile);
    });
}

function statSafe(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** lib/'s files (relative to lib/, without `.ts`, specs aside) with the files each imports. */
export function libGraph(lib = LIB): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sourceFiles(lib)) {
    graph.set(relative(lib, path).replace(/\.ts$/, ''), importsOf(path, lib));
  }
  return graph;
}

/** Every import of `graph` that goes the wrong way, and every cycle. */
export function layerProblems(graph: Map<string, string[]>): string[] {
  const problems: string[] = [];
  for (const [file, imports] of graph) {
    const layer = layerOf(file);
    for (const target of imports) {
      const to = layerOf(target);
      if (to === layer) continue;
      const allowed = BELOW[layer]?.includes(to) ?? false;
      const reachable = layer !== 'nest' || NEST_REACHES.some((re) => re.test(target));
      if (!allowed || !reachable) {
        problems.push(`lib/${file}.ts imports lib/${target}.ts: ${layer} may not import ${to}`);
      }
    }
  }
  problems.push(...cycles(graph));
  return problems;
}

function main(): void {
  const graph = libGraph();
  const problems = layerProblems(graph);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`check-layers: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log(`check-layers: ${graph.size} files of lib/, imports one way, no cycle`);
}

/** Every cycle of `graph`, once each (depth-first search, from each file in turn). */
function cycles(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string): void => {
    const at = onPath.indexOf(file);
    if (at >= 0) {
      found.push(
        `import cycle: ${[...onPath.slice(at), file].map((f) => `lib/${f}.ts`).join(' -> ')}`,
      );
      return;
    }
    if (done.has(file)) return;
    onPath.push(file);
    for (const target of graph.get(file) ?? []) visit(target);
    onPath.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

if (require.main === module) main();
