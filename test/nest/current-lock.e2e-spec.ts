import { Controller, Injectable, Param, Post } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { DistributedLock, LockService, LockView, ZkLockClient } from '../../lib';
import { testNamespace, useLockApp, zkConnect } from './support/nest-app';

@Injectable()
class LedgerService {
  constructor(private readonly locks: LockService) {}

  @DistributedLock('/accounts/<accountId>')
  async post(accountId: string, otherId = 'none') {
    await sleep(5); // the token is still there after an await
    return {
      lock: this.locks.current(`/accounts/${accountId}`),
      other: this.locks.current(`/accounts/${otherId}`),
    };
  }
}

@Controller('accounts')
class AccountsController {
  constructor(
    private readonly locks: LockService,
    private readonly ledger: LedgerService,
  ) {}

  @Post(':id')
  @DistributedLock('/accounts/<id>')
  async post(@Param('id') id: string) {
    await sleep(5);
    return { token: String(this.locks.current(`/accounts/${id}`)?.fencingToken) };
  }

  @Post(':id/ledger')
  @DistributedLock('/accounts/<id>')
  async postToLedger(@Param('id') id: string) {
    const outer = this.locks.current(`/accounts/${id}`)?.fencingToken;
    const { lock } = await this.ledger.post(id);
    return { outer: String(outer), inner: String(lock?.fencingToken) };
  }
}

describe('LockService.current(): the lock this context holds', () => {
  const namespace = testNamespace('current-lock');
  const lockApp = useLockApp(
    { controllers: [AccountsController], providers: [LedgerService] },
    { namespace },
  );
  const { acquired } = lockApp;
  let other: ZkLockClient;

  beforeAll(async () => {
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
  });

  afterAll(() => other.close());

  it('gives a decorated service method the token of its lock, as in the acquired event', async () => {
    const { lock, other: unrelated } = await lockApp.app.get(LedgerService).post('a1', 'a2');
    expect(acquired.map((e) => [e.path, e.reentrant])).toEqual([['/accounts/a1', false]]);
    expect(lock?.path).toBe('/accounts/a1');
    expect(lock?.fencingToken).toBe(acquired[0].fencingToken);
    expect(unrelated).toBeUndefined();
  });

  it('gives a route handler the token of its lock, as in the acquired event', async () => {
    const res = await request(lockApp.app.getHttpServer()).post('/accounts/h1').expect(201);
    expect(acquired.map((e) => e.path)).toEqual(['/accounts/h1']);
    expect(res.body).toEqual({ token: String(acquired[0].fencingToken) });
  });

  it('gives a service the handler lock it re-enters: one token', async () => {
    const res = await request(lockApp.app.getHttpServer()).post('/accounts/n1/ledger').expect(201);
    expect(acquired.map((e) => e.reentrant)).toEqual([false, true]);
    const token = String(acquired[0].fencingToken);
    expect(res.body).toEqual({ outer: token, inner: token });
  });

  it('is undefined outside a lock', () => {
    expect(lockApp.locks.current('/accounts/a1')).toBeUndefined();
    expect(lockApp.locks.isHeld('/accounts/a1')).toBe(false);
  });

  it('is read-only: no release, and the lock goes when its owner returns', async () => {
    const { lock } = await lockApp.app.get(LedgerService).post('r1');
    const view = lock as LockView & { release?: unknown };
    expect(view.release).toBeUndefined();
    expect(view.state).toBe('released');
    expect(lockApp.locks.current('/accounts/r1')).toBeUndefined();
    const next = await other.tryAcquire('/accounts/r1');
    expect(next).not.toBeNull();
    expect(next!.fencingToken).toBeGreaterThan(view.fencingToken);
    await next!.release();
  });
});
