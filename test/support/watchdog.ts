/**
 * A watchdog for a process this Node process starts (a server, a sample-app instance): a detached
 * `sh` loop that sends the child `signal` once this process is gone without stopping it (a
 * crashed test run, SIGKILL, a demo signalled while it starts), so no orphan is left running.
 * Whoever stops the child kills its watchdog first (SIGKILL): the pid may be reused afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export function startWatchdog(childPid: number, signal: 'KILL' | 'INT' = 'KILL'): ChildProcess {
  const watchdog = spawn(
    'sh',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -${signal} ${childPid} 2>/dev/null`,
    ],
    { stdio: 'ignore', detached: true },
  );
  watchdog.unref();
  return watchdog;
}
