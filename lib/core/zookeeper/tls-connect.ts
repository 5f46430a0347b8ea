/** Owns TLS for node-zookeeper-client: the connect step on a TLS socket, and TLS failures. */
import type { TLSSocket } from 'node:tls';
import type { ConnectFailure } from '../errors';
import { CM_STATES } from './nzc-patch';

export interface ZkServerAddress {
  host: string;
  port: number | string;
}

/**
 * TLS for node-zookeeper-client 1.1.3, which only speaks plain TCP: its
 * `ConnectionManager.prototype.connect` opens every socket with `net.connect(server)` and has no
 * hook. This replaces `connect` on ONE connection manager instance (never the prototype, never
 * the `net` module) with the same steps on a socket from `open` (a TLSSocket), so everything
 * else in the client (framing, pings, reconnects, other servers of the ensemble) is unchanged:
 * - `secureConnect` instead of `connect`: the ConnectRequest is written once the handshake is
 *   done, and the client's connect timeout covers the handshake;
 * - `onFailure` hears why a handshake failed (see describeTlsFailure), for the error the caller
 *   gets when no session comes, and whether that server refused for good (refusedForGood).
 * The steps mirror the original line by line; tls-connect.spec.ts fails if the installed
 * node-zookeeper-client's connect() no longer has the shape mirrored here.
 */
export function useTlsSockets(
  cm: any,
  open: (server: ZkServerAddress) => TLSSocket,
  onFailure: (failure: ConnectFailure, server: ZkServerAddress, forGood: boolean) => void,
): void {
  cm.connect = function connectOverTls(): void {
    cm.setState(CM_STATES.CONNECTING);
    cm.findNextServer((server: ZkServerAddress) => {
      const socket = open(server);
      cm.socket = socket;
      cm.connectTimeoutHandler = setTimeout(cm.onSocketConnectTimeout.bind(cm), cm.connectTimeout);
      socket.setNoDelay();
      let secured = false;
      socket.on('secureConnect', () => (secured = true));
      socket.on('secureConnect', cm.onSocketConnected.bind(cm));
      socket.on('data', cm.onSocketData.bind(cm));
      socket.on('drain', cm.onSocketDrain.bind(cm));
      socket.on('close', cm.onSocketClosed.bind(cm));
      socket.on('error', cm.onSocketError.bind(cm));
      socket.on('error', (err: Error & { code?: string }) =>
        onFailure(describeTlsFailure(err, server, secured), server, refusedForGood(err)),
      );
    });
  };
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
 * What a socket error on a TLS connection means, and what to change. Node reports certificate
 * checks of the server by OpenSSL's verify code, and a refusal by the server (e.g. of our client
 * certificate under `ssl.clientAuth=need`) as an `ERR_SSL_..._ALERT_...` code.
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
