/** One line saying what the numbers were measured on. */
import { cpus, loadavg, totalmem } from 'node:os';
import { fourLetterWord } from '../test/support/zookeeper';
import { serversOf } from './zk-requests.counter';

export async function machineSummary(connectionString: string, quick: boolean): Promise<string> {
  const cpu = cpus();
  const srvr = await fourLetterWord(serversOf(connectionString)[0].port, 'srvr').catch(() => '');
  const zk = /Zookeeper version: ([^-,\s]+)/.exec(srvr)?.[1] ?? 'unknown';
  const mode = /Mode: (\w+)/.exec(srvr)?.[1] ?? 'unknown';
  return [
    `machine: ${cpu.length} x ${cpu[0]?.model.trim() ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
    `node ${process.version}`,
    `ZooKeeper ${zk} ${mode} at ${connectionString}`,
    quick ? 'QUICK run (numbers are noisy)' : 'full run',
  ].join(' | ');
}
