// Owns the WebSocket answer to a lock error (WsException with code and status).
import { lockErrorInfo } from './lock-errors.codes';

/**
 * Maps the core's errors on a WebSocket gateway handler (`@SubscribeMessage`) to a
 * `WsException` whose error is `{ code, status, message, lock? }` (lock-errors.codes.ts). Socket.IO
 * sends it to the client as an 'exception' event; with `@nestjs/platform-ws` Nest's default
 * filter does not send exceptions, so use a filter of your own (docs/nestjs/
 * transports-and-errors.md "WebSocket gateways"). `@nestjs/websockets` is loaded only here, on a WS call (an optional peer).
 */
export function toWsError(error: unknown): unknown {
  const info = lockErrorInfo(error);
  if (!info) return error;
  type WebSockets = typeof import('@nestjs/websockets');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { WsException } = require('@nestjs/websockets') as WebSockets;
  return new WsException({ ...info });
}
