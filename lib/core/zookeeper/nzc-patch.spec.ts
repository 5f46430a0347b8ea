import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import {
  CM_STATES,
  ConnectionHooks,
  PINNED_CLIENT_VERSION,
  UnsupportedZooKeeperClientError,
  answersRequest,
  assertSupportedClient,
  chrootOf,
  clientProblems,
  corkRequests,
  queueRequest,
  walkFrames,
} from './nzc-patch';
import { ACL, createClient } from './zk-client';
import { AclEntry, OP, encodeCreate } from './jute-requests';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const ConnectionManager = require('node-zookeeper-client/lib/ConnectionManager.js');

const installed = () => ({
  version: PINNED_CLIENT_VERSION,
  states: { ...ConnectionManager.STATES },
  prototype: { ...ConnectionManager.prototype },
});

describe('the node-zookeeper-client patch checks the installed client', () => {
  it('pins the version package.json depends on, and the installed one is it', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8'));
    expect(pkg.dependencies['node-zookeeper-client']).toBe(PINNED_CLIENT_VERSION);
    expect(clientProblems(installed())).toEqual([]);
    expect(() => assertSupportedClient()).not.toThrow();
    expect(ConnectionManager.STATES).toEqual(CM_STATES);
  });

  it('fails loudly on another version, naming it and what to do', () => {
    const problems = clientProblems({ ...installed(), version: '1.2.0' });
    expect(problems).toEqual(['version 1.2.0 is installed']);
    const error = new UnsupportedZooKeeperClientError(problems);
    expect(error.name).toBe('UnsupportedZooKeeperClientError');
    expect(error.message).toMatch(/^node-zookeeper-client is not the version .* \(1\.1\.3\)/);
    expect(error.message).toContain('version 1.2.0 is installed');
    expect(error.message).toContain('Install node-zookeeper-client@1.1.3');
  });

  it('fails on a replaced private method that is missing or changed shape', () => {
    const prototype = installed().prototype;
    delete prototype.onSocketData;
    prototype.setState = function setState(): void {}; // other arity, no 'state' event
    prototype.connect = function connect(this: any): void {
      this.socket = netConnect(this.server); // no connect timer any more
    };
    expect(clientProblems({ ...installed(), prototype })).toEqual([
      'ConnectionManager.prototype.connect changed shape',
      'ConnectionManager.prototype.setState changed shape',
      'ConnectionManager.prototype.onSocketData is missing',
    ]);
  });

  it('fails when the connection states are numbered differently', () => {
    const states = { ...installed().states, CLOSED: -5 };
    expect(clientProblems({ ...installed(), states })).toEqual(['its state CLOSED is not -2']);
  });
});

describe('answersRequest', () => {
  const frame = (xid: number, extra = 12): Buffer => {
    const buffer = Buffer.alloc(8 + extra);
    buffer.writeInt32BE(4 + extra, 0);
    buffer.writeInt32BE(xid, 4);
    return buffer;
  };

  it('tells replies and ping replies from watch notifications', () => {
    expect(answersRequest(frame(7))).toBe(true);
    expect(answersRequest(frame(-2))).toBe(true);
    expect(answersRequest(frame(-1))).toBe(false);
    expect(answersRequest(Buffer.concat([frame(-1), frame(-1), frame(3)]))).toBe(true);
  });

  it('counts only complete frames', () => {
    expect(answersRequest(frame(7).subarray(0, 10))).toBe(false);
    expect(answersRequest(Buffer.concat([frame(-1), frame(5).subarray(0, 9)]))).toBe(false);
  });
});

describe('walkFrames (replies handed to the client one frame at a time)', () => {
  const frame = (xid: number, body = 12): Buffer => {
    const buffer = Buffer.alloc(8 + body);
    buffer.writeInt32BE(4 + body, 0);
    buffer.writeInt32BE(xid, 4);
    return buffer;
  };
  const setup = (failOn?: number) => {
    const seen: Buffer[] = [];
    const calls: string[] = [];
    const socket = { destroyed: false, destroy: () => void (socket.destroyed = true) };
    const cm: any = { socket };
    const hooks = {
      answered: () => void calls.push('answered'),
      undecodable: (f: Buffer) => void calls.push(`undecodable ${f.readInt32BE(4)}`),
    } as unknown as ConnectionHooks;
    const onData = (f: Buffer): void => {
      if (f.readInt32BE(4) === failOn) throw new Error('Unknown code: -125');
      seen.push(f);
    };
    return { cm, hooks, onData, seen, calls, socket };
  };

  it('hands over each complete frame as a view, keeps a partial one for the next read', () => {
    const { cm, hooks, onData, seen, calls } = setup();
    const bytes = Buffer.concat([frame(1), frame(-1), frame(2), frame(3)]);
    walkFrames(cm, bytes.subarray(0, 65), hooks, onData);
    expect(seen.map((f) => f.readInt32BE(4))).toEqual([1, -1, 2]);
    expect(seen[0].buffer).toBe(bytes.buffer); // not copied
    walkFrames(cm, bytes.subarray(65), hooks, onData);
    expect(seen.map((f) => f.readInt32BE(4))).toEqual([1, -1, 2, 3]);
    expect(seen.every((f) => f.length === 20)).toBe(true);
    expect(calls).toEqual(['answered', 'answered']);
  });

  it('drops the socket and the rest on a frame the client cannot decode', () => {
    const { cm, hooks, onData, seen, calls, socket } = setup(2);
    walkFrames(cm, Buffer.concat([frame(1), frame(2), frame(3)]), hooks, onData);
    expect(seen.map((f) => f.readInt32BE(4))).toEqual([1]);
    expect(calls).toEqual(['answered', 'undecodable 2']);
    expect(socket.destroyed).toBe(true);
  });

  it('tells no answer for watch notifications alone', () => {
    const { cm, hooks, onData, calls } = setup();
    walkFrames(cm, Buffer.concat([frame(-1), frame(-1)]), hooks, onData);
    expect(calls).toEqual([]);
  });
});

describe("queueRequest (a request of ours in the client's queue)", () => {
  it("queues our frame behind the client's own, its xid written in when it is numbered", () => {
    // Never connected: requests stay in the client's queue, and no socket is opened.
    const client = createClient('127.0.0.1:2181/chroot/app', { retries: 0 });
    const cm = client.connectionManager;
    expect(chrootOf(cm)).toBe('/chroot/app');
    expect(chrootOf(createClient('127.0.0.1:2181').connectionManager)).toBeUndefined();
    client.exists('/a', undefined, () => undefined);
    const acl = ACL.OPEN_ACL_UNSAFE as AclEntry[];
    const frame = encodeCreate(0, '/chroot/app/locks/x', Buffer.from('d'), acl, 3);
    queueRequest(cm, OP.CREATE, frame, () => undefined);
    const theirs = cm.packetQueue.shift();
    const ours = cm.packetQueue.shift();
    expect(theirs.request.header.type).toBe(OP.EXISTS);
    expect(ours.request.header).toEqual({ xid: 0, type: OP.CREATE });
    for (const xid of [7, 0x7fffffff, 8]) {
      ours.request.header.xid = xid;
      expect(ours.request.toBuffer()).toEqual(
        encodeCreate(xid, '/chroot/app/locks/x', Buffer.from('d'), acl, 3),
      );
    }
    expect(cm.packetQueue.shift()).toBeUndefined();
  });
});

describe('corkRequests (requests issued together leave in one socket write)', () => {
  const corkable = () => ({
    writableCorked: 0,
    destroyed: false,
    cork() {
      this.writableCorked++;
    },
    uncork() {
      this.writableCorked--;
    },
  });
  const tick = () => new Promise<void>((resolve) => process.nextTick(resolve));
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('with no reply awaited, writes at the end of the tick (a lone caller is not delayed)', async () => {
    const cm = { socket: corkable(), pendingQueue: [] };
    corkRequests(cm);
    corkRequests(cm); // the same tick: the same write
    expect(cm.socket.writableCorked).toBe(1);
    await tick();
    expect(cm.socket.writableCorked).toBe(0);
  });

  it("with replies awaited, holds the write to the loop turn's end, across callbacks", async () => {
    const cm = { socket: corkable(), pendingQueue: [{}] };
    corkRequests(cm);
    await tick(); // another caller's callback, its ticks run: still one write to come
    expect(cm.socket.writableCorked).toBe(1);
    corkRequests(cm);
    expect(cm.socket.writableCorked).toBe(1);
    await turn();
    expect(cm.socket.writableCorked).toBe(0);
  });

  it('uncorks the socket it corked, not the one of a reconnect meanwhile', async () => {
    const first = corkable();
    const cm = { socket: first, pendingQueue: [{}] };
    corkRequests(cm);
    const next = corkable();
    cm.socket = next; // the connection dropped and a new one was made before the turn's end
    await turn();
    expect(first.writableCorked).toBe(0);
    expect(next.writableCorked).toBe(0);
  });

  it('leaves a missing or destroyed socket alone', () => {
    expect(() => corkRequests({ socket: undefined, pendingQueue: [] })).not.toThrow();
    const cm = { socket: { ...corkable(), destroyed: true }, pendingQueue: [] };
    corkRequests(cm);
    expect(cm.socket.writableCorked).toBe(0);
  });
});
