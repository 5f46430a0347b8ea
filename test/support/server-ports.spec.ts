/**
 * Server ports come from outside the kernel's ephemeral range, from a block of the process's
 * own, never twice, never one someone listens on (test/support/server-ports.ts).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import {
  candidatePorts,
  canListen,
  parseEphemeralRange,
  serverPortRange,
  serverPorts,
} from './server-ports';

describe('server ports', () => {
  it('reads the ephemeral range as /proc prints it, with Linux default for anything else', () => {
    expect(parseEphemeralRange('32768\t60999\n')).toEqual([32768, 60999]);
    expect(parseEphemeralRange('1024 65535')).toEqual([1024, 65535]);
    expect(parseEphemeralRange('')).toEqual([32768, 60999]);
  });

  it('picks the widest range outside the ephemeral one, above the well-known ports', () => {
    expect(serverPortRange([32768, 60999])).toEqual([10000, 32767]);
    expect(serverPortRange([12000, 50000])).toEqual([50001, 65535]);
    // Nothing worth having outside it: the whole range (each process still walks its own way).
    expect(serverPortRange([1024, 65000])).toEqual([10000, 65535]);
  });

  it('walks the range from the process block, wrapping around, each port once', () => {
    const ports = [...candidatePorts([100, 199], 3)];
    expect(ports.slice(0, 3)).toEqual([196, 197, 198]);
    expect(ports.slice(4, 6)).toEqual([100, 101]);
    expect(new Set(ports).size).toBe(100);
    expect([...candidatePorts([100, 199], 4)][0]).toBe(128); // the next pid, another block
  });

  it('hands out ports outside the ephemeral range, never twice, never a taken one', async () => {
    const [low, high] = serverPortRange(
      parseEphemeralRange(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')),
    );
    const first = await serverPorts(3);
    const next = first[2] + 1; // the one this process would try next
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(next, '127.0.0.1', resolve));
    try {
      const second = await serverPorts(3);
      expect(second).not.toContain(next);
      expect(new Set([...first, ...second]).size).toBe(6);
      for (const port of [...first, ...second]) {
        expect(port).toBeGreaterThanOrEqual(low);
        expect(port).toBeLessThanOrEqual(high);
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    expect(await canListen(next)).toBe(true);
  });
});
