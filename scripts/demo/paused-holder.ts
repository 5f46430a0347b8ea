/**
 * The paused holder (Kleppmann's GC-pause case, with SIGSTOP): instance A holds a product lock
 * and has read the stock; it is frozen past its session timeout, ZooKeeper expires its session
 * and deletes its node, B and C sell the whole stock under newer fencing tokens, then A wakes
 * up and writes. The store must refuse A's write (its token is stale): nothing oversold.
 */
import { encodePathSegment, LockNodeInfo, ZkLockClient } from '../../lib';
import type { DemoStack } from './demo-stack';
import { expectStatus, HttpJson } from './http-json';
import { sendOrders } from './order-load';

export interface PausedHolderOptions {
  stack: DemoStack;
  http: HttpJson;
  productId: string;
  /** Stock the other instances sell while A is frozen. */
  stock: number;
  /** The instances' ZK_SESSION_TIMEOUT_MS. */
  sessionTimeoutMs: number;
  namespace?: string;
  onStep?: (message: string) => void;
}

export interface PausedHolderResult {
  productId: string;
  stock: number;
  sessionTimeoutMs: number;
  holder: { instance: string; pid: number; fencingToken: string };
  pausedMs: number;
  othersAccepted: number;
  othersRejected: number;
  pausedHolderAnswer: { status: number; error?: string };
  fencedWriteRejected: boolean;
  finalStock: number;
  sold: number;
  oversold: number;
}

export async function runPausedHolder(options: PausedHolderOptions): Promise<PausedHolderResult> {
  const { stack, http, productId, stock, sessionTimeoutMs, onStep = () => undefined } = options;
  const lockPath = `/locks/product:${encodePathSegment(productId)}`;
  // A's payment step outlasts the pause, so A is frozen between its read and its write.
  onStep('restarting app-A with a long payment step');
  const a = await stack.restartInstance(0, {
    STOCK_IO_DELAY_MS: String(sessionTimeoutMs * 2),
    LOG_LEVEL: 'debug',
  });
  const [, ...others] = stack.urls;
  const product = `${others[0]}/products/${productId}`;
  expectStatus(await http.put(product, { stock }), 200, `PUT ${product}`);
  const zk = await ZkLockClient.connect({
    connectionString: stack.zkConnect,
    namespace: options.namespace,
  });
  try {
    const pending = http.post(`${a.url}/orders`, { productId, quantity: 1 });
    const escaped = productId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const line = await a.waitForLine(
      new RegExp(`"${escaped}".*token (\\d+).*awaiting payment`),
      30_000,
    );
    const holderNode = (await zk.inspect(lockPath)).holder;
    if (holderNode?.data.instance !== a.name) {
      throw new Error(
        `expected ${a.name} to hold ${lockPath}, found ${JSON.stringify(holderNode)}`,
      );
    }
    onStep(`${a.name} holds ${lockPath} and read the stock: SIGSTOP`);
    a.pause();
    const pausedAt = Date.now();
    await waitUntilGone(zk, lockPath, holderNode, sessionTimeoutMs * 3 + 10_000);
    onStep(`session of ${a.name} expired after ${Date.now() - pausedAt} ms; others sell ${stock}`);
    const { outcomes } = await sendOrders({
      http,
      urls: others,
      endpoint: '/orders',
      productId,
      orders: stock,
    });
    onStep(`SIGCONT ${a.name}: it wakes up and tries its write`);
    const pausedMs = Date.now() - pausedAt;
    a.resume();
    const answer = await pending;
    const after = expectStatus(await http.get(product), 200, `GET ${product}`);
    const error = answer.status === 201 ? undefined : String(answer.body?.error ?? answer.body);
    return {
      productId,
      stock,
      sessionTimeoutMs,
      holder: { instance: a.name, pid: a.pid, fencingToken: /token (\d+)/.exec(line)![1] },
      pausedMs,
      othersAccepted: outcomes.filter((o) => o.status === 201).length,
      othersRejected: outcomes.filter((o) => o.status !== 201).length,
      pausedHolderAnswer: { status: answer.status, error },
      fencedWriteRejected: answer.status === 409 && error === 'STALE_FENCING_TOKEN',
      finalStock: after.stock,
      sold: after.sold,
      oversold: Math.max(0, after.sold - stock),
    };
  } finally {
    a.resume();
    await zk.close();
  }
}

/** Waits until ZooKeeper has deleted the frozen holder's node (its session expired). */
async function waitUntilGone(
  zk: ZkLockClient,
  path: string,
  node: LockNodeInfo,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { holder, queue } = await zk.inspect(path);
    if (![holder, ...queue].some((n) => n?.name === node.name)) return;
    if (Date.now() > deadline) {
      throw new Error(
        `lock node ${node.name} of the frozen holder still exists after ${timeoutMs} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
