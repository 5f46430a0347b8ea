// `nestjs-zookeeper-lock/core/testing`: the in-memory ZooKeeper for plain-Node tests, without
// NestJS (lib/testing re-exports it beside the testing module).
export { InMemoryZooKeeper } from './in-memory-zookeeper';
