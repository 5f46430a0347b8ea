/**
 * Issue #10 §1: a class with `@DistributedLock` methods in an application without ZkLockModule
 * fails the bootstrap, naming the method, instead of its first call. With the module, the
 * class's own onApplicationBootstrap still runs.
 */
import { Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLock, ZkLockModule } from '../../lib';

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
      '@DistributedLock on ReportJob.run: this application has no ZkLockModule. Import ZkLockModule.forRoot(',
    );
    await moduleRef.close().catch(() => undefined); // close() rethrows the failed init
  });

  it("passes with the module, and the class's own onApplicationBootstrap still runs", async () => {
    booted.length = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forTest()],
      providers: [ReportJob],
    }).compile();
    await moduleRef.init();
    expect(booted).toEqual(['ReportJob']);
    expect(await moduleRef.get(ReportJob).run('monday')).toBe('monday');
    await moduleRef.close();
  });
});
