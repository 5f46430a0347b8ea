/**
 * Ports for the ZooKeeper servers the tests start, picked where nothing else takes them.
 *
 * A test that stops and restarts its server needs the same port back: its clients hold it in
 * their connect string. A port of the kernel's ephemeral range (what listen(0) gives, as
 * freePort() does) is up for grabs while the server is down: the kernel hands it to the next
 * listen(0) of any process on this shared machine (another run's server) and, as the local port,
 * to any outgoing connection. The restarted JVM then cannot bind it, or `srvr` reaches someone
 * else's server. Outside that range the kernel hands out nothing by itself, so server ports are
 * picked there: each process walks the range from a block of its own (from its pid, so two
 * processes running at once seldom try the same ports), never hands out a port twice (a stopped
 * member's port stays its own), and skips ports someone listens on now.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export type PortRange = readonly [first: number, last: number];

/** Linux's default, when /proc/sys/net/ipv4/ip_local_port_range cannot be read. */
const LINUX_EPHEMERAL: PortRange = [32768, 60999];
/** Below it: well-known and registered services (ZooKeeper's 2181, PostgreSQL's 5432, 8080...). */
const LOWEST = 10_000;
/** Ports per process block: more than a 3-node ensemble with TLS ports takes (12). */
const BLOCK = 32;

/** `first last` as /proc/sys/net/ipv4/ip_local_port_range prints it. */
export function parseEphemeralRange(text: string): PortRange {
  const [first, last] = text.trim().split(/\s+/).map(Number);
  return Number.isInteger(first) && Number.isInteger(last) ? [first, last] : LINUX_EPHEMERAL;
}

/** The widest range from LOWEST to 65535 outside `ephemeral` (all of it if none is left). */
export function serverPortRange(ephemeral: PortRange): PortRange {
  const below: PortRange = [LOWEST, ephemeral[0] - 1];
  const above: PortRange = [Math.max(LOWEST, ephemeral[1] + 1), 65535];
  const widest = size(below) >= size(above) ? below : above;
  return size(widest) >= 1000 ? widest : [LOWEST, 65535];
}

/** The ports of `range` in the order process `pid` tries them: from its block, each once. */
export function* candidatePorts(range: PortRange, pid: number): Generator<number> {
  const count = size(range);
  const start = (pid * BLOCK) % count;
  for (let i = 0; i < count; i++) yield range[0] + ((start + i) % count);
}

let candidates: Generator<number> | undefined;

/** `count` distinct ports nothing listens on now, none handed out before by this process. */
export async function serverPorts(count: number): Promise<number[]> {
  candidates ??= candidatePorts(serverPortRange(ephemeralRange()), process.pid);
  const ports: number[] = [];
  while (ports.length < count) {
    const next = candidates.next();
    if (next.done) throw new Error('test tooling: every server port of this process is used');
    if (await canListen(next.value)) ports.push(next.value);
  }
  return ports;
}

/** Whether this process could listen on 127.0.0.1:`port` now. */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Who listens on `port`, as `ss` shows it (best effort, for error messages). */
export function listenersOf(port: number): string {
  try {
    const out = execFileSync('ss', ['-Htlnp', `sport = :${port}`], { encoding: 'utf8' });
    return out.trim().replace(/\s+/g, ' ') || 'nobody listens now';
  } catch {
    return 'unknown (no `ss`)';
  }
}

function ephemeralRange(): PortRange {
  try {
    return parseEphemeralRange(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'));
  } catch {
    return LINUX_EPHEMERAL;
  }
}

function size([first, last]: PortRange): number {
  return Math.max(0, last - first + 1);
}
