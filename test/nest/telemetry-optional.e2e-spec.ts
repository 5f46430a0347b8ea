/**
 * `@opentelemetry/api` is an optional peer dependency: the library loads it only when the
 * module starts, and works (without telemetry) in a process where it is not installed.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scaled } from '../support/time-scale';
import { testNamespace, zkConnect } from './support/nest-app';

const root = join(__dirname, '..', '..');
const run = (args: string[]) =>
  promisify(execFile)(process.execPath, ['-r', 'ts-node/register/transpile-only', ...args], {
    cwd: root,
    env: { ...process.env, ZK_CONNECT: zkConnect(), NAMESPACE: testNamespace('otel-optional') },
    timeout: scaled(90_000),
  });

describe('without @opentelemetry/api', () => {
  it('loading the library loads no @opentelemetry package', async () => {
    const script = `
      require('./lib');
      const loaded = Object.keys(require.cache).filter((f) => f.includes('@opentelemetry'));
      process.stdout.write(JSON.stringify(loaded));
    `;
    const { stdout } = await run(['-e', script]);
    expect(JSON.parse(stdout)).toEqual([]);
  });

  it('a Nest application boots, locks on the real ZooKeeper and closes, measuring nothing', async () => {
    const { stdout } = await run([
      '-r',
      './test/nest/fixtures/hide-opentelemetry.ts',
      './test/nest/fixtures/telemetry.app.ts',
    ]);
    expect(JSON.parse(stdout)).toEqual({
      held: true,
      pathTemplates: [],
      waitedListeners: 0,
      apiFound: false,
      loaded: [],
    });
  });

  it('the same application measures when the API is there (the check above can fail)', async () => {
    const { stdout } = await run(['./test/nest/fixtures/telemetry.app.ts']);
    const seen = JSON.parse(stdout);
    expect(seen).toMatchObject({ held: true, pathTemplates: ['/jobs/<name>'], apiFound: true });
    expect(seen.waitedListeners).toBe(1);
    expect(seen.loaded).toEqual(
      expect.arrayContaining([expect.stringContaining('@opentelemetry/api')]),
    );
  });
});
