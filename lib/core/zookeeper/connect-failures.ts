/** Owns why connecting failed: the last failure of a plain or TLS attempt, and refusals. */
import type { ConnectFailure } from '../errors';

/**
 * Why the last connection attempt failed (TLS or plain), until a session is connected, and
 * which servers refused the TLS handshake on a certificate check (see refusedEverywhere).
 */
export class ConnectFailures {
  last?: ConnectFailure;
  private readonly refusedBy = new Set<string>();

  constructor(private readonly serverCount: () => number) {}

  /** A plain socket failed. */
  socketFailed(err: Error): void {
    this.last = describeSocketFailure(err);
  }

  /** A TLS attempt failed; true when a certificate check has now failed on every server. */
  tlsFailed(failure: ConnectFailure, server: string, forGood: boolean): boolean {
    this.last = failure;
    if (!forGood) {
      this.refusedBy.delete(server);
      return false;
    }
    this.refusedBy.add(server);
    return this.refusedEverywhere;
  }

  /**
   * Every server of the connection string refused the TLS handshake on a certificate check:
   * waiting for a session cannot help until certificates or tls options change.
   */
  get refusedEverywhere(): boolean {
    return this.refusedBy.size > 0 && this.refusedBy.size >= this.serverCount();
  }

  /** A session is connected: earlier failures no longer explain anything. */
  connected(): void {
    this.last = undefined;
    this.refusedBy.clear();
  }
}

/**
 * Why a plain TCP connection to a ZooKeeper server failed, and what to change: a name DNS does
 * not know and a refused connection are different faults, and a wait that ends without a
 * session says which (issue #19 §6). TLS connections are described by tls-connect.ts.
 */
export function describeSocketFailure(err: Error & SocketErrorFields): ConnectFailure {
  const code = err.code ?? 'no code';
  const at = err.address ? `${err.address}:${err.port}` : 'the ZooKeeper server';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
    return {
      reason: `DNS name not found: "${err.hostname}" (${code})`,
      hint: 'Check the host names in the connection string, and the DNS this process uses',
      cause: err,
    };
  }
  if (code === 'ECONNREFUSED') {
    return {
      reason: `connection refused by ${at} (ECONNREFUSED): nothing listens on that port`,
      hint: 'Check that the servers are running and that the ports are their clientPort',
      cause: err,
    };
  }
  return {
    reason: `the connection to ${at} failed (${code}: ${err.message.split('\n')[0]})`,
    hint: 'Check that the servers are running and reachable from this host',
    cause: err,
  };
}

interface SocketErrorFields {
  code?: string;
  hostname?: string;
  address?: string;
  port?: number;
}
