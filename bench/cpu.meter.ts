/**
 * CPU time spent during a measured run: by this process (process.cpuUsage), and by the
 * ZooKeeper JVMs when the bench started them (utime + stime from /proc, Linux only).
 */
import { readFileSync } from 'node:fs';

/** CPU milliseconds this process used while `work` ran. */
export async function processCpuMs<T>(
  work: () => Promise<T>,
): Promise<{ value: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const value = await work();
  const used = process.cpuUsage(before);
  return { value, cpuMs: (used.user + used.system) / 1000 };
}

/** utime + stime of a process in ms, or undefined where /proc is not available. */
function procCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command name start at field 3 (state): utime is 14, stime is 15.
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

export class ServerCpuMeter {
  constructor(private readonly pids: number[]) {}

  /** Total CPU ms of the servers, or undefined if any cannot be read (or none are known). */
  read(): number | undefined {
    if (this.pids.length === 0) return undefined;
    let sum = 0;
    for (const pid of this.pids) {
      const ms = procCpuMs(pid);
      if (ms === undefined) return undefined;
      sum += ms;
    }
    return sum;
  }
}
