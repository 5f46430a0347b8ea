/**
 * Instances of the sample app started together on a new SQLite file (as `npm run demo` starts
 * three): each migrates the file on start. Switching it to WAL takes an exclusive lock that
 * SQLite does not wait for, so before the store retried the switch, about one instance in ten
 * failed with "database is locked". Each round, every process opens a new file, then all of them
 * start migrating it at the same moment.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAllFixtures, nextMessage, spawnScript } from '../core/support/agents';

const FIXTURE = join(__dirname, 'fixtures', 'sqlite-migrate.ts');
const ROUNDS = 15;
const INSTANCES = 6;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sqlite-start-'));
});
afterAll(async () => {
  await killAllFixtures();
  rmSync(dir, { recursive: true, force: true });
});

it(`${INSTANCES} instances migrating one new file at once all start, ${ROUNDS} rounds`, async () => {
  const children = Array.from({ length: INSTANCES }, () => spawnScript(FIXTURE, {}));
  await Promise.all(children.map((c) => nextMessage<string>(c, (m) => m === 'ready')));
  const ask = (command: string) =>
    Promise.all(
      children.map((c) => {
        const reply = nextMessage<string>(c, () => true);
        c.send(command);
        return reply;
      }),
    );
  const failures: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await ask(`open ${join(dir, `round-${round}.sqlite`)}`);
    const replies = await ask('migrate');
    failures.push(...replies.filter((r) => r !== 'migrated').map((r) => `round ${round}: ${r}`));
  }
  expect(failures).toEqual([]);
});
