/**
 * One entry's API report with API Extractor: the public types reachable from the entry's
 * declaration file, written as a `.api.md` file. Unexported types the public ones use (a
 * forgotten export) are in the report too, so a change to them is seen as well.
 */
import type * as ApiExtractor from '@microsoft/api-extractor';
import { join } from 'node:path';
import { type ApiEntry, REPORT_FOLDER, root } from './entries';

export interface ReportRun {
  /** The folder of the emitted declarations (`<folder>/lib/index.d.ts`). */
  readonly declarations: string;
  /** Where the freshly made report is written (check mode compares it with the committed one). */
  readonly tempFolder: string;
  /** `true` writes the report into `reportFolder`; `false` only compares. */
  readonly update: boolean;
  /** The committed reports; `api/` unless a test says otherwise. */
  readonly reportFolder?: string;
}

export interface ReportResult {
  /** The fresh report differs from the committed one (or none is committed). */
  readonly changed: boolean;
  /** The committed report and the fresh one, for a diff. */
  readonly committed: string;
  readonly fresh: string;
  /** Errors API Extractor or the compiler reported. */
  readonly errors: string[];
}

/** API Extractor's messages that say nothing about the API itself. */
const QUIET = new Set([
  'console-preamble',
  'console-compiler-version-notice',
  'console-api-report-changed',
  'console-api-report-created',
  'console-api-report-copied',
  'console-api-report-unchanged',
  'console-api-report-not-copied',
  'console-writing-dts-rollup',
  'console-writing-doc-model-file',
]);

/** API Extractor, or an error saying how to install it (a checkout from before it was added). */
function apiExtractor(): typeof ApiExtractor {
  try {
    // Loaded here, not imported, so a missing install fails with the message below.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@microsoft/api-extractor');
  } catch (err) {
    throw new Error(
      `@microsoft/api-extractor is not installed (${(err as Error).message.split('\n')[0]}): ` +
        'run `npm ci` (a worktree whose node_modules are hard links shared with others: ' +
        '`rm -rf node_modules && npm install`)',
    );
  }
}

export function extractReport(entry: ApiEntry, run: ReportRun): ReportResult {
  const { Extractor, ExtractorConfig, ExtractorLogLevel } = apiExtractor();
  const reportFolder = run.reportFolder ?? REPORT_FOLDER;
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: join(run.declarations, entry.types),
      bundledPackages: [],
      newlineKind: 'lf',
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            module: 'commonjs',
            moduleResolution: 'node',
            lib: ['ES2022'],
            strict: true,
            types: ['node'],
            typeRoots: [join(root, 'node_modules', '@types')],
            skipLibCheck: true,
          },
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.report,
        reportFolder,
        reportTempFolder: run.tempFolder,
        includeForgottenExports: true,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Error },
          // Release tags and doc comments are not this project's convention.
          'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
          'ae-undocumented': { logLevel: ExtractorLogLevel.None },
          // Shown in the report (with the unexported type's declaration), not an error.
          'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
        },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      },
    },
    configObjectFullPath: join(root, 'api', 'api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
  });
  const errors: string[] = [];
  const result = Extractor.invoke(config, {
    localBuild: run.update,
    messageCallback: (message: ApiExtractor.ExtractorMessage) => {
      message.handled = true;
      if (QUIET.has(message.messageId)) return;
      if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) {
        errors.push(`${message.messageId}: ${message.formatMessageWithLocation(root)}`);
      }
    },
  });
  return {
    changed: result.apiReportChanged,
    committed: join(reportFolder, entry.report),
    fresh: join(run.tempFolder, entry.report),
    errors,
  };
}
