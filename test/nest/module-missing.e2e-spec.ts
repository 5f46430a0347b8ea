/**
 * One way to reach the LockService (Nest injects it into the instances it creates).
 * A class with `@DistributedLock` methods in an application without ZkLockModule, or in a module
 * that cannot see it, fails the bootstrap naming the method, instead of its first call. With the
 * module, the class's own onApplicationBootstrap still runs. An instance Nest did not create
 * fails at its call with the same advice.
 */
import { Injectable, Module, OnApplicationBootstrap, Scope } from '@nestjs/common';
import { ContextIdFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  DistributedLock,
  LockService,
  ZK_LOCK_CLIENT,
  ZkLockClient,
  ZkLockError,
  ZkLockModule,
} from '../../lib';
import { ZkLockTestingModule } from '../../lib/testing';

const booted: string[] = [];

@Injectable()
class ReportJob implements OnApplicationBootstrap {
  @DistributedLock('/jobs/report:<day>')
  async run(day: string): Promise<string> {
    return day;
  }

  onApplicationBootstrap(): void {
    booted.push('ReportJob');
  }
}

describe('bootstrap without ZkLockModule', () => {
  it('fails app.init() naming the decorated method and what to import', async () => {
    @Module({ providers: [ReportJob] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await expect(async () => moduleRef.init()).rejects.toThrow(
      '@DistributedLock on ReportJob.run: this application has no ZkLockModule. Import',
    );
    await expect(async () => moduleRef.init()).rejects.toThrow(
      'Import ZkLockModule.forRoot({ connectionString, isGlobal: true }) once',
    );
    await moduleRef.close().catch(() => undefined); // close() rethrows the failed init
  });

  it("passes with the module, and the class's own onApplicationBootstrap still runs", async () => {
    booted.length = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot()],
      providers: [ReportJob],
    }).compile();
    await moduleRef.init();
    expect(booted).toEqual(['ReportJob']);
    expect(await moduleRef.get(ReportJob).run('monday')).toBe('monday');
    await moduleRef.close();
  });

  it('fails app.init() when the module of the class cannot see a non-global ZkLockModule', async () => {
    @Module({ providers: [ReportJob] })
    class ReportsModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot(), ReportsModule],
    }).compile();
    await expect(async () => moduleRef.init()).rejects.toThrow(
      '@DistributedLock on ReportJob.run: no LockService is visible to ReportJob (ZkLockModule is imported, but not global, in another module)',
    );
    await moduleRef.close().catch(() => undefined);
  });

  it('closes the ZooKeeper session it opened when it fails that bootstrap (no hook runs after)', async () => {
    @Module({ providers: [ReportJob] })
    class ReportsModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: process.env.ZK_CONNECT! }), ReportsModule],
    }).compile();
    const client = moduleRef.get<ZkLockClient>(ZK_LOCK_CLIENT);
    expect(client.state).toBe('CONNECTED');
    await expect(async () => moduleRef.init()).rejects.toThrow(
      'no LockService is visible to ReportJob',
    );
    expect(client.state).toBe('CLOSED');
    await moduleRef.close().catch(() => undefined);
  });

  it('passes in a feature module when the module is global, and locks through that LockService', async () => {
    @Module({ providers: [ReportJob] })
    class ReportsModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot({ isGlobal: true }), ReportsModule],
    }).compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    const seen: string[] = [];
    locks.on('acquired', ({ path }) => seen.push(path));
    expect(await moduleRef.get(ReportJob).run('tuesday')).toBe('tuesday');
    expect(seen).toEqual(['/jobs/report:tuesday']);
    await moduleRef.close();
  });

  it('gives a request-scoped instance its LockService too (no lifecycle hook, injected all the same)', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequestJob {
      @DistributedLock('/jobs/per-request:<day>')
      async run(day: string): Promise<string> {
        return day;
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot()],
      providers: [PerRequestJob],
    }).compile();
    await moduleRef.init();
    const job = await moduleRef.resolve(PerRequestJob, ContextIdFactory.create());
    expect(await job.run('wednesday')).toBe('wednesday');
    await moduleRef.close();
  });

  it('rejects a call on an instance Nest did not create, or a detached method, saying what to do', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot()],
      providers: [ReportJob],
    }).compile();
    await moduleRef.init();
    const stray = new ReportJob();
    const call = stray.run('thursday');
    await expect(call).rejects.toBeInstanceOf(ZkLockError);
    await expect(call).rejects.toThrow(
      '@DistributedLock on ReportJob.run was called on an instance of ReportJob, which Nest gave no LockService.',
    );
    await expect(call).rejects.toThrow('let Nest create ReportJob');
    const detached = moduleRef.get(ReportJob).run;
    await expect(detached('friday')).rejects.toThrow(
      'was called on no instance (the method was detached from its object',
    );
    await moduleRef.close();
  });
});
