import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { cacheFolder, tempDir } from '../package/npm';
import type { TypeScriptLine } from '../package/typescripts';
import { repoPath, REPO_ROOT } from './markdown-files';
import type { Snippet } from './extract';

type CompilerOptions = Record<string, unknown>;

/**
 * What a user's project compiles with (a Nest app's tsconfig, made strict), the package's names
 * resolved to this checkout's sources, so a snippet breaks as soon as the API it shows changes.
 */
const OPTIONS: CompilerOptions = {
  strict: true,
  target: 'es2022',
  lib: ['es2022'],
  // ESM so that plain-Node snippets may `await` at the top level.
  module: 'esnext',
  moduleResolution: 'bundler',
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  skipLibCheck: true,
  // The test runners' globals (describe, beforeEach...) for the test examples.
  types: ['node', 'vitest/globals'],
  paths: entrySources(),
};

/**
 * `nestjs-zookeeper-lock` and each of its subpath exports (package.json `exports`), resolved to
 * the source the entry's declarations are built from: `./dist/lib/core/index.d.ts` ->
 * `lib/core/index.ts`.
 */
function entrySources(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  const paths: Record<string, string[]> = {};
  for (const [subpath, target] of Object.entries<{ types?: string }>(pkg.exports)) {
    if (!target.types) continue;
    const source = target.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts');
    paths[join(pkg.name, subpath).split('\\').join('/')] = [join(REPO_ROOT, source)];
  }
  return paths;
}

const STUBS = join(REPO_ROOT, 'scripts', 'doc-snippets', 'stubs');

/**
 * Declarations for packages the snippets show but this project does not install (the library
 * types its untyped dependency in a module of its own, lib/core/zookeeper/zk-client.ts).
 */
const DECLARATIONS = [join(STUBS, 'nestjs-config.d.ts')];

/**
 * The reader's own application files a snippet imports (`./../src/app.module` in a test),
 * whatever the relative path: the specifier is pointed at a stub beside the snippet
 * (`./app.module.js`, which every profile resolves) when the snippet is written out. Only the
 * string changes, so every position before it on the line stays.
 */
const READER_FILES = ['app.module'];
const READER_IMPORT = new RegExp(
  `(from\\s+)(['"])\\.{1,2}/(?:[^'"]*/)?(${READER_FILES.join('|').replace(/\./g, '\\.')})(?:\\.js)?\\2`,
  'g',
);

/**
 * One way a reader compiles a snippet: this project's options, or a Nest CLI starter's tsconfig
 * (test/consumers/<app>/tsconfig.json: nodenext, isolatedModules, emitDecoratorMetadata), the
 * snippet as a file of that app (`.mts` in the ESM app, `.cts` in the CommonJS one).
 */
interface Profile {
  name: string;
  options: CompilerOptions;
  extension: '.ts' | '.mts' | '.cts';
  /** The snippets this way applies to. */
  applies(snippet: Snippet): boolean;
}

/** The NestJS 11 packages `.ci/nestjs-11` installs in its cache folder, when it has. */
const NESTJS_11 = join(cacheFolder('nestjs-11'), 'node_modules');

function starter(app: string): CompilerOptions {
  const file = join(REPO_ROOT, 'test', 'consumers', app, 'tsconfig.json');
  const { compilerOptions } = JSON.parse(readFileSync(file, 'utf8')) as {
    compilerOptions: CompilerOptions;
  };
  const { outDir: _outDir, ...options } = compilerOptions;
  return {
    ...options,
    // The app's tests run with their runner's globals; Vitest's declare them here.
    types: ['node', 'vitest/globals'],
    paths: entrySources(),
  };
}

/** A snippet that awaits at the top level is an ES module's: a CommonJS app cannot have it. */
const topLevelAwait = (snippet: Snippet): boolean => /^(?:const .*= )?await /m.test(snippet.text);
const isNest = (snippet: Snippet): boolean => /from '@nestjs\//.test(snippet.text);

/** Whether the NestJS 11 starter's profile compiles against NestJS 11 (else the project's 12). */
export const HAS_NESTJS_11 = existsSync(NESTJS_11);

const PROFILES: Profile[] = [
  { name: 'this project', options: OPTIONS, extension: '.ts', applies: () => true },
  {
    name: 'the NestJS 12 starter (ESM)',
    options: starter('nest12-esm'),
    extension: '.mts',
    applies: () => true,
  },
  {
    name: 'the NestJS 11 starter (CommonJS)',
    options: {
      ...starter('nest11-cjs'),
      paths: {
        ...entrySources(),
        ...(HAS_NESTJS_11 ? { '@nestjs/*': [join(NESTJS_11, '@nestjs', '*')] } : {}),
      },
    },
    extension: '.cts',
    applies: (snippet) => isNest(snippet) && !topLevelAwait(snippet),
  },
];

/** One problem: where and what, and the profile and TypeScript line that showed it. */
interface Found {
  text: string;
  profile: number;
  typescript: number;
}

/**
 * Every snippet under each profile that applies to it, with each TypeScript line given. A
 * problem is reported once for the project's options if they show it, else once for each
 * starter that does, naming it; and naming the TypeScript lines that show it unless all do.
 */
export async function typeCheckSnippets(
  snippets: Snippet[],
  typescripts: TypeScriptLine[],
): Promise<string[]> {
  const dir = tempDir('doc-snippets');
  try {
    // Packages resolve from the snippets' folders as from a file of this repository.
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const written = PROFILES.map((profile, i) =>
      writeProfile(join(dir, String(i)), profile, snippets),
    );
    const found: Found[] = [];
    for (const [t, typescript] of typescripts.entries()) {
      const outputs = await compile(typescript, written);
      outputs.forEach((output, p) => {
        for (const text of describeOutput(output, written[p]))
          found.push({ text, profile: p, typescript: t });
      });
    }
    return report(found, typescripts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(found: Found[], typescripts: TypeScriptLine[]): string[] {
  const projects = new Set(found.filter((f) => f.profile === 0).map((f) => f.text));
  // Problem (and starter, unless the project's options show it too) -> the lines showing it.
  const lines = new Map<string, { text: string; profile: number; typescripts: Set<number> }>();
  for (const { text, profile, typescript } of found) {
    const shown = projects.has(text) ? 0 : profile;
    const key = `${shown} ${text}`;
    const entry = lines.get(key) ?? { text, profile: shown, typescripts: new Set<number>() };
    entry.typescripts.add(typescript);
    lines.set(key, entry);
  }
  return [...lines.values()].map(({ text, profile, typescripts: showing }) => {
    const under = [
      ...(profile > 0 ? [PROFILES[profile].name] : []),
      ...(showing.size < typescripts.length
        ? [...showing].sort().map((t) => typescripts[t].name)
        : []),
    ];
    return under.length > 0 ? `${text} [${under.join(', ')}]` : text;
  });
}

/** A profile's folder and the snippet each of its files holds. */
interface Written {
  dir: string;
  snippets: Map<string, Snippet>;
}

/** A profile's folder: its snippets as files, the stubs they import, its tsconfig.json. */
function writeProfile(dir: string, profile: Profile, snippets: Snippet[]): Written {
  mkdirSync(dir);
  copyFileSync(join(STUBS, 'app.module.d.ts'), join(dir, 'app.module.d.ts'));
  const files = new Map<string, Snippet>();
  snippets.filter(profile.applies).forEach((snippet, i) => {
    const name = repoPath(snippet.file).replace(/[/.]/g, '_');
    const file = join(dir, `${name}_L${snippet.line}_${i}${profile.extension}`);
    writeFileSync(file, snippet.text.replace(READER_IMPORT, '$1$2./$3.js$2'));
    files.set(file, snippet);
  });
  const tsconfig = {
    // Only the snippets' own diagnostics are reported (see describeOutput): checking every
    // package's declarations as well (a starter's `skipLibCheck: false`) would triple the time
    // for nothing shown. check:package checks the package's declarations that way.
    compilerOptions: { ...profile.options, noEmit: true, skipLibCheck: true },
    files: [...files.keys(), ...DECLARATIONS],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  return { dir, snippets: files };
}

/**
 * Each profile's folder compiled by `typescript`: what tsc would print for it, diagnostics in
 * `--pretty false`'s form. A line with TypeScript's compiler API (5.x, 6.x) compiles in this
 * process and asks for the snippets' diagnostics only, so the library's sources are read but
 * not checked whole; the native compiler (7.x) has no such API, so its `tsc` runs on each
 * folder (all at once: it checks everything in a second or two).
 */
async function compile(typescript: TypeScriptLine, profiles: Written[]): Promise<string[]> {
  if (!existsSync(join(typescript.dir, 'lib', 'typescript.js'))) {
    return Promise.all(profiles.map((profile) => runTsc(typescript, profile.dir)));
  }
  // That line's own compiler, loaded from its folder (the cache's 6.x is not this project's).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ts = require(typescript.dir) as typeof import('typescript');
  return profiles.map((profile) => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(profile.dir, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
        },
      },
    )!;
    const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
    const diagnostics = [
      ...config.errors,
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...[...profile.snippets.keys()].flatMap((file) => {
        const source = program.getSourceFile(file)!;
        return [
          ...program.getSyntacticDiagnostics(source),
          ...program.getSemanticDiagnostics(source),
        ];
      }),
    ];
    return ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (file) => file,
      getCurrentDirectory: () => profile.dir,
      getNewLine: () => '\n',
    });
  });
}

/** `tsc -p <dir>`: what it printed (its diagnostics, or why it could not run). */
function runTsc(typescript: TypeScriptLine, dir: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [typescript.tsc, '-p', dir, '--pretty', 'false'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      // 0: no errors; else errors reported (exit codes 1 and 2 both mean that).
      if (code === 0 || /error TS\d+/.test(output)) done(output);
      else done(`tsc exited with ${code}:\n${output.replace(/^(?=.)/gm, '    ')}`);
    });
  });
}

/** A diagnostic's first line: `file(line,col): error TS1234: message`, or `error TS5023: ...`. */
const DIAGNOSTIC = /^(?:(.+)\((\d+),(\d+)\): )?error TS(\d+): (.*)$/;

/**
 * tsc's output, one problem per diagnostic in a snippet or in no file (the options); the
 * library's own files are the build's business (`npm run build`), the packages' their authors'.
 * Anything else tsc printed (it could not run) is a problem as it stands.
 */
function describeOutput(output: string, { dir, snippets }: Written): string[] {
  const problems: string[] = [];
  // The diagnostic being read (a chained message goes on over indented lines); none if dropped.
  let chain: string[] | undefined;
  const flush = (): void => {
    if (chain) problems.push(chain.join('\n'));
    chain = undefined;
  };
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith(' ')) {
      chain?.push(line);
      continue;
    }
    flush();
    const match = DIAGNOSTIC.exec(line);
    if (!match) {
      chain = [line];
      continue;
    }
    const [, file, row, column, code, message] = match;
    const where = file ? locate(resolve(dir, file), Number(row), Number(column), snippets) : '';
    if (where !== undefined) chain = [`${where}TS${code}: ${message}`];
  }
  flush();
  return problems;
}

/** `<markdown file>:<line>:<column>: ` for a position in a snippet; none elsewhere. */
function locate(
  file: string,
  line: number,
  column: number,
  snippets: Map<string, Snippet>,
): string | undefined {
  const snippet = snippets.get(file);
  if (!snippet) return undefined;
  const inBlock = line - 1 - snippet.headLines;
  const blockLines = snippet.text.split('\n').length - snippet.headLines;
  return inBlock >= 0 && inBlock < blockLines
    ? `${repoPath(snippet.file)}:${snippet.line + inBlock}:${column + snippet.indent}: `
    : `${repoPath(snippet.file)}:${snippet.line} (in prelude ${snippet.prelude}, line ${line}): `;
}
