// `nestjs-zookeeper-lock/testing`: test doubles, kept out of the main entry (nothing `.` or
// `./core` loads reaches them). docs/design.md "The published package".
export { ZkLockTestingModule } from './zk-lock-testing.module';
export type { ModuleOverrides, ZkLockTestOptions } from './zk-lock-testing.module';
export { InMemoryZooKeeper } from '../core/testing';
