import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { repoPath, REPO_ROOT } from './markdown-files';
import type { Snippet } from './extract';

/**
 * What a user's project compiles with (a Nest app's tsconfig, made strict), the package's names
 * resolved to this checkout's sources, so a snippet breaks as soon as the API it shows changes.
 */
const OPTIONS: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  // ESM so that plain-Node snippets may `await` at the top level.
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  skipLibCheck: true,
  noEmit: true,
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

/**
 * Declarations for packages the snippets show but this project does not install (the library
 * types its untyped dependency in a module of its own, lib/core/zookeeper/zk-client.ts).
 */
const DECLARATIONS = [join(REPO_ROOT, 'scripts', 'doc-snippets', 'stubs', 'nestjs-config.d.ts')];

/**
 * The reader's own application files a snippet imports (`./../src/app.module` in a test):
 * resolved to a stub, whatever the relative path.
 */
const READER_FILES: Record<string, string> = {
  'app.module': join(REPO_ROOT, 'scripts', 'doc-snippets', 'stubs', 'app.module.d.ts'),
};

function readerFile(specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return READER_FILES[specifier.replace(/^.*\//, '').replace(/\.js$/, '')];
}

/**
 * One way a reader compiles a snippet: this project's options, or a Nest CLI starter's tsconfig
 * (test/consumers/<app>/tsconfig.json: nodenext, isolatedModules, emitDecoratorMetadata), the
 * snippet as a file of that app (`.mts` in the ESM app, `.cts` in the CommonJS one).
 */
interface Profile {
  name: string;
  options: ts.CompilerOptions;
  extension: '.ts' | '.mts' | '.cts';
  /** The snippets this way applies to. */
  applies(snippet: Snippet): boolean;
}

/** The NestJS 11 packages `.ci/nestjs-11` installs in its cache folder, when it has. */
const NESTJS_11 = join(homedir(), '.cache', 'nestjs-zookeeper-lock', 'nestjs-11', 'node_modules');

function starter(app: string): ts.CompilerOptions {
  const file = join(REPO_ROOT, 'test', 'consumers', app, 'tsconfig.json');
  const { config } = ts.readConfigFile(file, ts.sys.readFile);
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, REPO_ROOT);
  return {
    ...options,
    noEmit: true,
    // The app's tests run with their runner's globals; Vitest's declare them here.
    types: ['node', 'vitest/globals'],
    paths: entrySources(),
  };
}

/** A snippet that awaits at the top level is an ES module's: a CommonJS app cannot have it. */
const topLevelAwait = (snippet: Snippet): boolean => /^(?:const .*= )?await /m.test(snippet.text);
const isNest = (snippet: Snippet): boolean => /from '@nestjs\//.test(snippet.text);

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
        ...(existsSync(NESTJS_11) ? { '@nestjs/*': [join(NESTJS_11, '@nestjs', '*')] } : {}),
      },
    },
    extension: '.cts',
    applies: (snippet) => isNest(snippet) && !topLevelAwait(snippet),
  },
];

/**
 * Every snippet under each profile that applies to it. A problem the project's own options
 * show is reported once; one only a starter shows names that starter.
 */
export function typeCheckSnippets(snippets: Snippet[]): string[] {
  const [project, ...starters] = PROFILES;
  const problems = typeCheckUnder(project, snippets);
  const seen = new Set(problems);
  for (const profile of starters) {
    for (const problem of typeCheckUnder(profile, snippets.filter(profile.applies))) {
      if (!seen.has(problem)) problems.push(`${problem} [${profile.name}]`);
    }
  }
  return problems;
}

function typeCheckUnder(profile: Profile, snippets: Snippet[]): string[] {
  const OPTIONS = profile.options;
  const virtual = new Map<string, Snippet>();
  snippets.forEach((snippet, i) => {
    const name = repoPath(snippet.file).replace(/[/.]/g, '_');
    const file = `${name}_L${snippet.line}_${i}${profile.extension}`;
    virtual.set(join(REPO_ROOT, '.doc-snippets', file), snippet);
  });
  const host = ts.createCompilerHost(OPTIONS);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => virtual.has(file) || fileExists(file);
  host.readFile = (file) => virtual.get(file)?.text ?? readFile(file);
  host.getSourceFile = (file, language, ...rest) => {
    const snippet = virtual.get(file);
    if (snippet) return ts.createSourceFile(file, snippet.text, language, true);
    return getSourceFile(file, language, ...rest);
  };
  host.resolveModuleNames = (specifiers, containingFile, _reused, _redirect, _options, source) =>
    specifiers.map((specifier, i) => {
      const stub = readerFile(specifier);
      if (stub) return { resolvedFileName: stub, extension: ts.Extension.Dts };
      const mode = source ? ts.getModeForResolutionAtIndex(source, i, OPTIONS) : undefined;
      return ts.resolveModuleName(
        specifier,
        containingFile,
        OPTIONS,
        host,
        undefined,
        undefined,
        mode,
      ).resolvedModule;
    });
  const program = ts.createProgram([...virtual.keys(), ...DECLARATIONS], OPTIONS, host);
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  // The library's own files are the build's business (`npm run build`); here only the snippets.
  const perSnippet = [...virtual.keys()].flatMap((file) => {
    const source = program.getSourceFile(file)!;
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
  });
  return [...global, ...perSnippet].map((diagnostic) => describe(diagnostic, virtual));
}

function describe(diagnostic: ts.Diagnostic, virtual: Map<string, Snippet>): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ');
  const file = diagnostic.file;
  if (!file || diagnostic.start === undefined) return `TS${diagnostic.code}: ${message}`;
  const { line, character } = file.getLineAndCharacterOfPosition(diagnostic.start);
  const snippet = virtual.get(file.fileName);
  if (!snippet) return `${repoPath(file.fileName)}:${line + 1}: TS${diagnostic.code}: ${message}`;
  const inBlock = line - snippet.headLines;
  const where =
    inBlock >= 0 && inBlock < snippet.text.split('\n').length - snippet.headLines
      ? `${repoPath(snippet.file)}:${snippet.line + inBlock}:${character + 1 + snippet.indent}`
      : `${repoPath(snippet.file)}:${snippet.line} (in prelude ${snippet.prelude}, line ${line + 1})`;
  return `${where}: TS${diagnostic.code}: ${message}`;
}
