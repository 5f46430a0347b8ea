import type { ConnectFailure } from '../errors';

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
