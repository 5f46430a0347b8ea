import { DECODABLE_CODES, undecodableCode } from './nzc-error-codes';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const Exception = require('node-zookeeper-client/lib/Exception.js');

describe("node-zookeeper-client 1.1.3's error codes", () => {
  it('lists exactly the codes the installed client decodes', () => {
    const decodes = (code: number): boolean => {
      try {
        Exception.create(code);
        return true;
      } catch {
        return false;
      }
    };
    for (let code = -200; code <= 0; code++) {
      expect([code, DECODABLE_CODES.has(code)]).toEqual([code, decodes(code)]);
    }
  });

  it('finds the first undecodable code among reply frames', () => {
    const reply = (xid: number, err: number): Buffer => {
      const frame = Buffer.alloc(20);
      frame.writeInt32BE(16, 0);
      frame.writeInt32BE(xid, 4);
      frame.writeInt32BE(err, 16);
      return frame;
    };
    expect(undecodableCode(reply(1, -101))).toBeUndefined();
    expect(undecodableCode(Buffer.concat([reply(1, -101), reply(2, -125)]))).toBe(-125);
    expect(undecodableCode(Buffer.alloc(8))).toBeUndefined();
  });
});
