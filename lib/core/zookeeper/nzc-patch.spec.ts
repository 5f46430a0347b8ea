import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import {
  CM_STATES,
  PINNED_CLIENT_VERSION,
  UnsupportedZooKeeperClientError,
  answersRequest,
  assertSupportedClient,
  clientProblems,
} from './nzc-patch';

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
