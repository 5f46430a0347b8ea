/**
 * The declarations the package ships, emitted as `npm run build` emits them (tsconfig.build.json,
 * `stripInternal` included) into a folder of their own, so the API report never reads a stale
 * `dist/`.
 */
import ts from 'typescript';
import { join, relative } from 'node:path';
import { root } from './entries';

/** Emits `lib`'s declarations under `outDir` (`<outDir>/lib/index.d.ts`, ...); fails on errors. */
export function emitDeclarations(outDir: string): void {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: fail };
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.build.json'),
    { outDir, emitDeclarationOnly: true, sourceMap: false, declarationMap: false },
    host,
  );
  if (!config) throw new Error('tsconfig.build.json: not readable');
  const program = ts.createProgram(config.fileNames, config.options);
  const emitted = program.emit();
  const errors = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].filter(
    (d) => d.category === ts.DiagnosticCategory.Error,
  );
  if (errors.length > 0) fail(...errors);
}

function fail(...diagnostics: ts.Diagnostic[]): never {
  throw new Error(
    ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => root,
      getNewLine: () => '\n',
    }),
  );
}

/**
 * The errors a consumer that checks libraries (`skipLibCheck: false`) gets from the shipped
 * declarations reachable from `entries` (paths under `outDir`): a declaration that names a type
 * `stripInternal` left out, for one. API Extractor reads only what an entry exports.
 */
export function declarationErrors(outDir: string, entries: readonly string[]): string[] {
  const program = ts.createProgram(
    entries.map((entry) => join(outDir, entry)),
    {
      noEmit: true,
      strict: true,
      skipLibCheck: false,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: ['node'],
      typeRoots: [join(root, 'node_modules', '@types')],
    },
  );
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => {
      const where = d.file
        ? `${relative(outDir, d.file.fileName)}(${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1})`
        : 'declarations';
      return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
}
