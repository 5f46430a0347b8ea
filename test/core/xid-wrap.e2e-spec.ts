/**
 * Request numbers (xids) past 2^31-1: a session numbers its requests with a signed 32-bit xid, and
 * one that lives long enough (about a day at 25k requests a second) reaches the limit. Like
 * Java's client, the next request after 2^31-2 is number 1. A session started just below the
 * limit (the internal `firstXid` option) in a lock-agent process keeps taking and releasing
 * locks across it, and its close() resolves and leaves nothing running: the process exits on
 * its own.
 */
import { LockAgent, exited } from './support/agents';
import { useTestRoot } from './support/core-fixture';
import { settlesWithin } from './support/zk-admin';
import { scaled } from '../support/time-scale';

/** 30 requests below the last xid the session may use (2^31-2). */
const FIRST_XID = 2 ** 31 - 2 - 30;
/** At least 3 requests each (create, getChildren, delete): 90 requests, well past the limit. */
const CYCLES = 30;

describe('request numbers past 2^31-1', () => {
  const fixture = useTestRoot('xid-wrap');

  it('a session started near the limit keeps locking across it, and close() ends it', async () => {
    const path = `${fixture.root}/wrap`;
    const agent = await LockAgent.start({ firstXid: FIRST_XID, sessionTimeoutMs: 10_000 });
    let last = 0n;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const token = await agent.acquire(path, scaled(10_000));
      expect(token).toBeGreaterThan(last);
      last = token;
      await agent.release(path);
    }
    expect(await agent.send({ op: 'close' })).toMatchObject({ type: 'closed' });
    // No socket or timer left behind: the process ends by itself once close() resolved.
    expect(
      await settlesWithin('the agent exits on its own', exited(agent.child), scaled(10_000)),
    ).toBe(0);
    expect(await fixture.admin.children(path).catch(() => [])).toEqual([]);
  });
});
