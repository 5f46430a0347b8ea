/**
 * `@DistributedLock` on WebSocket gateway handlers (`@nestjs/platform-ws`), three
 * instances in their own processes: messages on one product from three sockets are handled one
 * at a time; a busy lock becomes a WsException `{ code: 'LOCK_TIMEOUT', status: 409 }`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { AppProcess } from './support/app-process';
import { testNamespace, waitFor, zkConnect } from './support/nest-app';
import { scaled } from '../support/time-scale';

const MESSAGES = 60;

interface Reply {
  event: string;
  data: any;
}

describe('@DistributedLock on a WebSocket gateway, 3 instances', () => {
  const namespace = testNamespace('websockets');
  const dir = mkdtempSync(join(tmpdir(), 'nest-ws-'));
  let apps: AppProcess[] = [];
  const sockets: WebSocket[] = [];
  const replies: Reply[][] = [[], [], []];

  beforeAll(async () => {
    const env = { ZK_CONNECT: zkConnect(), NAMESPACE: namespace, DIR: dir };
    apps = await Promise.all([0, 1, 2].map(() => AppProcess.start(env, 'ws.app.ts')));
    for (const [i, app] of apps.entries()) {
      const socket = new WebSocket(app.url.replace('http', 'ws'));
      socket.on('message', (raw) => replies[i].push(JSON.parse(String(raw)) as Reply));
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      sockets.push(socket);
    }
  });

  afterAll(async () => {
    sockets.forEach((s) => s.close());
    await Promise.all(apps.map((app) => app.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const counter = (file: string): number =>
    existsSync(join(dir, file)) ? Number(readFileSync(join(dir, file), 'utf8')) : 0;

  it('handles messages on one product one at a time across the instances', async () => {
    for (let seq = 0; seq < MESSAGES; seq++) {
      sockets[seq % 3].send(JSON.stringify({ event: 'deduct', data: { productId: 'kiwi', seq } }));
    }
    const deducted = () => replies.flat().filter((r) => r.event === 'deducted').length;
    await waitFor(() => deducted() === MESSAGES, 'every message answered');
    expect(counter('ws-kiwi')).toBe(MESSAGES);
    const sections = readFileSync(join(dir, 'ws-kiwi.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ').slice(0, 2).map(BigInt))
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    for (let i = 1; i < sections.length; i++)
      expect(sections[i][0] >= sections[i - 1][1]).toBe(true);
  });

  it('sends a busy lock to the client as { code: LOCK_TIMEOUT, status: 409 }', async () => {
    sockets[0].send(
      JSON.stringify({ event: 'hold-first', data: { key: 'w', ms: scaled(5_000) } }),
    );
    const exception = () => replies[1].find((r) => r.event === 'exception');
    for (let attempt = 0; attempt < 100 && !exception(); attempt++) {
      const before = replies[1].length;
      sockets[1].send(JSON.stringify({ event: 'hold', data: { key: 'w', ms: 0 } }));
      await waitFor(() => replies[1].length > before, 'an answer to the second hold');
    }
    expect(exception()?.data).toMatchObject({ code: 'LOCK_TIMEOUT', status: 409, lock: '/held/w' });
    await waitFor(() => replies[0].some((r) => r.event === 'held'), 'the first hold to end');
  });

  it('sends the same when a plain handler calls a locked service', async () => {
    replies[1].length = 0;
    sockets[0].send(
      JSON.stringify({ event: 'hold-first', data: { key: 'v', ms: scaled(5_000) } }),
    );
    const exception = () => replies[1].find((r) => r.event === 'exception');
    for (let attempt = 0; attempt < 100 && !exception(); attempt++) {
      const before = replies[1].length;
      sockets[1].send(JSON.stringify({ event: 'hold-plain', data: { key: 'v', ms: 0 } }));
      await waitFor(() => replies[1].length > before, 'an answer to the plain hold');
    }
    expect(exception()?.data).toMatchObject({ code: 'LOCK_TIMEOUT', status: 409, lock: '/held/v' });
    await waitFor(
      () => replies[0].some((r) => r.event === 'held' && r.data === 'v'),
      'the first hold to end',
    );
  });
});
