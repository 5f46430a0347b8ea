import { Injectable } from '@nestjs/common';
import { DistributedLock, LockService } from 'nestjs-zookeeper-lock';
import { heldFencingToken, productLockPath } from '../locking/lock-paths';
import { productNotFound, staleFencingToken } from '../orders/inventory-errors';
import { InventoryStore, ProductView } from '../store/inventory.store';

@Injectable()
export class ProductsService {
  constructor(
    private readonly store: InventoryStore,
    private readonly locks: LockService,
  ) {}

  /** Creates or resets a product: sets its stock and deletes its orders, under its lock. */
  @DistributedLock('/locks/product:<id>')
  async setStock(id: string, stock: number): Promise<ProductView> {
    const path = productLockPath(id);
    const token = heldFencingToken(this.locks, path);
    if ((await this.store.setProduct(id, stock, token)) === 'stale') {
      throw staleFencingToken(path, token);
    }
    return { id, stock, sold: 0 };
  }

  async get(id: string): Promise<ProductView> {
    const product = await this.store.getProduct(id);
    if (!product) throw productNotFound(id);
    return product;
  }
}
