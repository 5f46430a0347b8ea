import { Injectable } from '@nestjs/common';
import { DistributedLock, LockService } from 'nestjs-zookeeper-lock';
import { heldFencingToken, orderLockPath, productLockPath } from '../locking/lock-paths';
import { InventoryStore } from '../store/inventory.store';
import { productNotFound, staleFencingToken } from './inventory-errors';

/** Puts a cancelled order's quantity back: the product lock, nested inside the order lock. */
@Injectable()
export class RestockService {
  constructor(
    private readonly store: InventoryStore,
    private readonly locks: LockService,
  ) {}

  @DistributedLock('/locks/product:<productId>')
  async putBack(
    productId: string,
    quantity: number,
    orderId: number,
    orderToken: bigint,
  ): Promise<void> {
    const path = productLockPath(productId);
    const productToken = heldFencingToken(this.locks, path);
    const claim = await this.store.claimProduct(productId, productToken);
    if (claim === 'missing') throw productNotFound(productId);
    if (claim === 'stale') throw staleFencingToken(path, productToken);
    const stock = (await this.store.readStock(productId))!;
    const written = await this.store.cancelOrder({
      orderId,
      orderToken,
      productId,
      newStock: stock + quantity,
      productToken,
    });
    // Either token may be the stale one; both writes were rolled back together.
    if (!written) throw staleFencingToken(`${orderLockPath(orderId)} or ${path}`, productToken);
  }
}
