/** Owns why connecting failed: the last failure of a plain or TLS attempt, and refusals. */
import type { ConnectFailure } from '../errors';
import type { ZkServerAddress } from './zk-client';

/** Why the last attempt failed until a session connects, and which servers refused our TLS. */
export class ConnectFailures {
  last?: ConnectFailure;
  private readonly refusedBy = new Set<string>();

  constructor(private readonly serverCount: () => number) {}

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
 * Why a plain TCP connection failed, and what to change: an unknown name and a refused connection
 * are different faults, and a wait without a session says which.
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

const UNTRUSTED_SERVER = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/**
 * A certificate check failed, on either side: trying the same server again cannot succeed until
 * its certificate or our tls options change (a refused connection or a reset might).
 */
export function refusedForGood(err: { code?: string }): boolean {
  const code = err.code ?? '';
  return (
    UNTRUSTED_SERVER.has(code) ||
    code === 'CERT_HAS_EXPIRED' ||
    code === 'CERT_NOT_YET_VALID' ||
    code === 'ERR_TLS_CERT_ALTNAME_INVALID' ||
    (code.startsWith('ERR_SSL_') && code.includes('ALERT'))
  );
}

/**
 * What a TLS socket error means, and what to change: Node reports our checks of the server by
 * OpenSSL's verify code, the server's refusal (`ssl.clientAuth=need`) as `ERR_SSL_..._ALERT_...`.
 */
export function describeTlsFailure(
  err: Error & { code?: string },
  server: ZkServerAddress,
  secured: boolean,
): ConnectFailure {
  const at = `${server.host}:${server.port}`;
  const code = err.code ?? 'no code';
  const what = `${code}: ${firstLine(err.message)}`;
  if (UNTRUSTED_SERVER.has(code)) {
    return {
      reason: `TLS: the certificate of ZooKeeper server ${at} is not trusted (${what})`,
      hint: "Set tls.ca to the CA certificate (PEM) that signed the servers' certificates",
      cause: err,
    };
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return {
      reason: `TLS: the certificate of ZooKeeper server ${at} is not valid now (${what})`,
      hint: "Renew the server's certificate (ssl.keyStore), or fix the clocks",
      cause: err,
    };
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return {
      reason: `TLS: the certificate of ZooKeeper server ${at} does not name "${server.host}" (${what})`,
      hint: "Connect by a name the certificate's subjectAltName lists, or set tls.servername",
      cause: err,
    };
  }
  if (code.startsWith('ERR_SSL_') && code.includes('ALERT')) {
    return {
      reason: `TLS: ZooKeeper server ${at} refused the handshake (${what})`,
      hint:
        'The server checks client certificates (ssl.clientAuth): set tls.cert and tls.key to a ' +
        "certificate signed by a CA in the servers' ssl.trustStore",
      cause: err,
    };
  }
  if (!secured) {
    return {
      reason: `TLS: the connection to ${at} failed before the handshake completed (${what})`,
      hint:
        "Check that this is the servers' secureClientPort (a plain clientPort does not speak " +
        'TLS) and that the servers are running',
      cause: err,
    };
  }
  return {
    reason: `TLS: the connection to ZooKeeper server ${at} failed (${what})`,
    hint: 'Check the servers and their ssl.* settings',
    cause: err,
  };
}

function firstLine(text: string): string {
  return text.split('\n')[0].trim();
}
