// Owns @InjectZkLockClient(): the injection of the module's connected ZkLockClient.
import { Inject } from '@nestjs/common';
import { ZK_LOCK_CLIENT } from '../module/zk-lock.constants';

/** Injects the module's connected `ZkLockClient`. */
export const InjectZkLockClient = (): PropertyDecorator & ParameterDecorator =>
  Inject(ZK_LOCK_CLIENT);
