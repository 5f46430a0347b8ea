/**
 * Run around every file of `npm test` (vitest.config.mts `setupFiles`): the run's shared
 * ZooKeeper (global-setup.ts) serves, as the process it started as, when the file starts and when
 * it ends. Files run in parallel on that server, so one that stopped, paused (SIGSTOP) or
 * restarted it would break the others' tests with timeouts far from the cause; this names it
 * instead. A file that does any of that to a server starts its own (ZooKeeperServer.start, or
 * useOwnServer in test/core), and owns it: nobody else connects to it.
 */
import { scaled } from './time-scale';
import { fourLetterWord, processState } from './zookeeper';

/** What is wrong with the shared server, or undefined (also when ZK_CONNECT was given). */
export async function sharedServerProblem(): Promise<string | undefined> {
  const pid = Number(process.env.ZK_SHARED_PID);
  const connect = process.env.ZK_CONNECT;
  if (!pid || !connect) return undefined;
  const conf = await fourLetterWord(Number(connect.split(':')[1]), 'conf', scaled(10_000)).catch(
    () => '',
  );
  // Read after the wait for `conf`: a signalled process takes a moment to show as stopped.
  const state = processState(pid);
  if (state === 'gone') return `its process (pid ${pid}) has exited`;
  if (state === 'stopped') return `its process (pid ${pid}) is stopped (SIGSTOP)`;
  const dataDir = /^dataDir=(.*)$/m.exec(conf)?.[1];
  if (dataDir !== process.env.ZK_SHARED_DATADIR) {
    return dataDir
      ? `its port answers for another server (dataDir=${dataDir})`
      : 'it does not answer `conf`';
  }
  return undefined;
}

async function check(when: string): Promise<void> {
  const problem = await sharedServerProblem();
  if (!problem) return;
  throw new Error(
    `The run's shared ZooKeeper (ZK_CONNECT=${process.env.ZK_CONNECT}) is broken ${when}: ` +
      `${problem}. A test file that stops, kills, pauses or restarts a server must start its ` +
      'own (ZooKeeperServer.start, or useOwnServer in test/core; CONTRIBUTING.md "Rules for tests").',
  );
}

beforeAll(() => check('as this file starts'));
afterAll(() => check('after this file ran'));
