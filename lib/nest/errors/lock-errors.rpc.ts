// Owns the microservice answer to a lock error (RpcException with code and status).
import { lockErrorInfo } from './lock-errors.codes';

/**
 * Maps the core's errors on a microservice handler (`@MessagePattern`, `@EventPattern`) to an
 * `RpcException` whose error is `{ code, status, message, lock? }` (lock-errors.codes.ts), which the
 * client's Observable errors with. Other errors pass through unchanged. `@nestjs/microservices`
 * is loaded only here, when a call runs on an RPC transport (an optional peer).
 */
export function toRpcError(error: unknown): unknown {
  const info = lockErrorInfo(error);
  if (!info) return error;
  type Microservices = typeof import('@nestjs/microservices');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RpcException } = require('@nestjs/microservices') as Microservices;
  return new RpcException({ ...info });
}
