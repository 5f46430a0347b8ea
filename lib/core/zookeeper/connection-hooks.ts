/** Owns what a session does at each event of its connection manager (nzc-patch's hooks). */
import { connect as tlsConnect } from 'node:tls';
import { patchConnectionManager } from './nzc-patch';
import { useTlsSockets } from './tls-connect';
import type { ZkCredentials } from './zk-credentials';
import type { ConnectFailures } from './connect-failures';
import type { SessionClock } from './session-clock';
import type { SessionLifecycle } from './session-lifecycle';
import type { SessionRequests } from './session-requests';

/** The parts of a session its connection manager's events go to. */
export interface HookedParts {
  credentials: ZkCredentials;
  failures: ConnectFailures;
  clock: SessionClock;
  lifecycle: SessionLifecycle;
  requests: SessionRequests;
  /** A certificate check failed on every server (ConnectFailures.tlsFailed): waits end at once. */
  refusedEverywhere(): void;
}

/**
 * Hooks one connection manager to the session's parts: TLS sockets when the credentials ask for
 * them, credentials behind every ConnectRequest, each answer to the clock, undecodable replies
 * to the requests, and whether to (re)connect and how the socket ended to the lifecycle.
 */
export function hookConnection(cm: any, parts: HookedParts): void {
  const { credentials, failures, clock, lifecycle, requests } = parts;
  if (credentials.usesTls) {
    useTlsSockets(
      cm,
      (server) => tlsConnect(credentials.tlsOptions({ ...server, port: Number(server.port) })),
      (failure, server, forGood) => {
        if (failures.tlsFailed(failure, `${server.host}:${server.port}`, forGood)) {
          parts.refusedEverywhere();
        }
      },
    );
  }
  patchConnectionManager(cm, {
    primeConnection: () => credentials.authPackets(),
    socketFailed: (err) => {
      // A TLS connection's failure is described by tls-connect.ts instead.
      if (!credentials.usesTls) failures.socketFailed(err);
    },
    answered: () => clock.heard(),
    undecodable: (frames) => requests.noteUndecodable(frames),
    mayConnect: () => {
      if (!lifecycle.mayConnect()) return false;
      clock.attempting();
      return true;
    },
    mayOpenSocket: () => !lifecycle.ended,
    socketConnected: () => lifecycle.socketConnected(),
    socketClosedForGood: () => lifecycle.socketClosedForGood(),
  });
}
