/**
 * Counts the requests ZooKeeper received (and the packets it sent) between two points, from
 * the `mntr` packet counters of every server in the connection string.
 */
import { mntr } from '../test/support/zookeeper';

export interface PacketCounts {
  received: number;
  sent: number;
}

/** The `host:port` pairs of a connection string (a chroot suffix is ignored). */
export function serversOf(connectionString: string): Array<{ host: string; port: number }> {
  const hosts = connectionString.split('/')[0];
  return hosts.split(',').map((entry) => {
    const [host, port] = entry.trim().split(':');
    return { host, port: Number(port || 2181) };
  });
}

export class ZkRequestCounter {
  private readonly ports: number[];

  constructor(connectionString: string) {
    const servers = serversOf(connectionString);
    const remote = servers.find((s) => s.host !== '127.0.0.1' && s.host !== 'localhost');
    if (remote) {
      throw new Error(
        `Cannot read mntr from "${remote.host}": the bench counts requests on loopback servers only. ` +
          'Unset ZK_CONNECT to let the bench start its own ZooKeeper, or point it at 127.0.0.1.',
      );
    }
    this.ports = servers.map((s) => s.port);
  }

  /** Sum of zk_packets_received / zk_packets_sent over every server. */
  async snapshot(): Promise<PacketCounts> {
    const all = await Promise.all(this.ports.map((port) => mntr(port)));
    return all.reduce<PacketCounts>(
      (sum, m) => ({
        received: sum.received + (m.zk_packets_received ?? 0),
        sent: sum.sent + (m.zk_packets_sent ?? 0),
      }),
      { received: 0, sent: 0 },
    );
  }

  /** Runs `work` and returns its result with the packets counted around it. */
  async around<T>(work: () => Promise<T>): Promise<{ value: T; packets: PacketCounts }> {
    const before = await this.snapshot();
    const value = await work();
    const after = await this.snapshot();
    return {
      value,
      packets: { received: after.received - before.received, sent: after.sent - before.sent },
    };
  }
}
