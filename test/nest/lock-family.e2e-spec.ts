/**
 * The lock family through the injectable LockService (read/write lock, semaphore,
 * multi-path lock) in a Nest application on the test ZooKeeper, with the module's namespace.
 */
import { Injectable } from '@nestjs/common';
import { LockModeError, LockService } from '../../lib';
import { testNamespace, useLockApp } from './support/nest-app';

@Injectable()
class CatalogService {
  constructor(private readonly locks: LockService) {}

  read(id: string): Promise<bigint> {
    return this.locks.readLock(`/catalog/${id}`).withLock((lock) => lock.fencingToken);
  }

  write(id: string): Promise<bigint> {
    return this.locks.writeLock(`/catalog/${id}`).withLock((lock) => lock.fencingToken);
  }

  render(): Promise<number> {
    return this.locks.semaphore('/sem/render', { maxLeases: 2 }).withLease((l) => l.leases);
  }

  transfer(from: string, to: string): Promise<readonly string[]> {
    return this.locks.withLockAll([`/accounts/${from}`, `/accounts/${to}`], (m) => m.paths);
  }
}

describe('LockService: the lock family', () => {
  const namespace = testNamespace('lock-family');
  const lockApp = useLockApp({ providers: [CatalogService] }, { namespace });

  it('read/write lock: a writer after a reader gets a greater token', async () => {
    const catalog = lockApp.app.get(CatalogService);
    const read = await catalog.read('c1');
    expect(await catalog.write('c1')).toBeGreaterThan(read);
  });

  it('a mutex and a read/write lock on one path are refused', async () => {
    const held = await lockApp.locks.acquire('/catalog/c2');
    await expect(lockApp.app.get(CatalogService).read('c2')).rejects.toBeInstanceOf(LockModeError);
    await held.release();
  });

  it('semaphore and multi-path lock', async () => {
    const catalog = lockApp.app.get(CatalogService);
    expect(await catalog.render()).toBe(1);
    expect(await catalog.transfer('b', 'a')).toEqual(['/accounts/a', '/accounts/b']);
  });
});
