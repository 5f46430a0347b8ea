import { EventEmitter } from 'node:events';
import type {
  AcquireOptions,
  ConnectionState,
  LockHandle,
  LockInspection,
  ZkLockClientOptions,
} from './types';

/**
 * The framework-free entry point. (API skeleton: the engine lands in the next commits.)
 * Events: 'acquired', 'released', 'timeout', 'lost', 'state' (see LockEvents).
 */
export class ZkLockClient extends EventEmitter {
  static async connect(_options: ZkLockClientOptions): Promise<ZkLockClient> {
    throw new Error('not implemented yet');
  }
  get state(): ConnectionState {
    throw new Error('not implemented yet');
  }
  /** Hex id of the current session. */
  get sessionId(): string {
    throw new Error('not implemented yet');
  }
  get connectionString(): string {
    throw new Error('not implemented yet');
  }
  async acquire(_path: string, _options?: AcquireOptions): Promise<LockHandle> {
    throw new Error('not implemented yet');
  }
  async tryAcquire(_path: string): Promise<LockHandle | null> {
    throw new Error('not implemented yet');
  }
  async withLock<T>(
    _path: string,
    _fn: (lock: LockHandle) => Promise<T> | T,
    _options?: AcquireOptions,
  ): Promise<T> {
    throw new Error('not implemented yet');
  }
  /** Whether the current async context holds `path`. */
  isHeld(_path: string): boolean {
    throw new Error('not implemented yet');
  }
  /** Holder and queue of a lock path, with what each node's data records. */
  async inspect(_path: string): Promise<LockInspection> {
    throw new Error('not implemented yet');
  }
  /** Releases every held lock at once, then closes the session. */
  async close(): Promise<void> {
    throw new Error('not implemented yet');
  }
}
