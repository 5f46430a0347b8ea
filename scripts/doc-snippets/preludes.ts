/**
 * Preludes of core snippets that are fragments (calls on a client set up elsewhere, the reader's
 * own functions); a NestJS snippet shows its imports and has none: `<!-- snippet: prelude=<name> -->` on the line above the block wraps it in `head`
 * and `tail` before the type check. Each says what the reader is assumed to have.
 */

/** The reader's own functions the core examples call. */
const USER_CODE = `declare function chargeAndShip(token: bigint, signal: AbortSignal): Promise<void>;
declare function work(token: bigint): Promise<string>;
declare function readConfig(token: bigint): Promise<string>;
declare function writeConfig(token: bigint): Promise<void>;
declare function render(doc: { id: string }, signal: AbortSignal): Promise<void>;
declare const doc: { id: string };
declare const paths: string[];
declare const db: { query(sql: string, params: unknown[]): Promise<unknown> };
`;

export const PRELUDES: Record<string, { head: string; tail?: string }> = {
  /** A core example that calls the reader's own functions (declared, not shown). */
  'core-work': { head: USER_CODE },
  /** Calls on a connected client `locks`, as the recipe pages set it up. */
  'core-client': {
    head: `import { fencingTokenText, ZkLockClient } from 'nestjs-zookeeper-lock/core';
${USER_CODE}declare const locks: ZkLockClient;
declare const signal: AbortSignal;
`,
  },
};
