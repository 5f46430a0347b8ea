import { Injectable, Logger } from '@nestjs/common';
import { DistributedLock, LockService, MultiLockHandle } from 'nestjs-zookeeper-lock';
import { heldFencingToken, orderLockPath, productLockPath } from '../locking/lock-paths';
import { PaymentGateway } from '../payment/payment.gateway';
import { InventoryStore } from '../store/inventory.store';
import { outOfStock, productNotFound, staleFencingToken, orderNotFound } from './inventory-errors';
import type { OrderBody } from './order-body';
import { RestockService } from './restock.service';

export interface PlacedOrder {
  orderId: number;
  productId: string;
  quantity: number;
  /** The product lock's token the write was fenced with (a string: JSON has no bigint). */
  fencingToken: string | null;
}

export interface PlacedMultiOrder {
  /** One order per item, in the order of `items`. */
  orderIds: number[];
  items: OrderBody[];
  /** Each product lock's token its write was fenced with, in the order of `items`. */
  fencingTokens: string[];
}

export interface CancelledOrder {
  orderId: number;
  productId: string;
  quantity: number;
  status: 'cancelled';
  /** true for the one cancel that put the quantity back, false for repeats. */
  restocked: boolean;
}

@Injectable()
export class OrdersService {
  private readonly logger = new Logger(OrdersService.name);

  constructor(
    private readonly store: InventoryStore,
    private readonly locks: LockService,
    private readonly payment: PaymentGateway,
    private readonly restock: RestockService,
  ) {}

  /** Read, pay, write, under the product's lock; the write is fenced with the lock's token. */
  @DistributedLock('/locks/product:<productId>')
  async placeOrder(productId: string, quantity: number): Promise<PlacedOrder> {
    const path = productLockPath(productId);
    const token = heldFencingToken(this.locks, path);
    const claim = await this.store.claimProduct(productId, token);
    if (claim === 'missing') throw productNotFound(productId);
    if (claim === 'stale') throw staleFencingToken(path, token);
    return this.sell(productId, quantity, token, path);
  }

  /**
   * Several products at once, all or nothing, under one multi-path lock on every product's path
   * (taken in one canonical order, so orders naming the same products in opposite orders cannot
   * deadlock); every write is fenced with its product's token, in one transaction. The wait is
   * the module's waitTimeoutMs; a lock timeout answers 409, ZooKeeper down 503 (the module maps
   * lock errors wherever they are thrown).
   */
  placeMultiOrder(items: OrderBody[]): Promise<PlacedMultiOrder> {
    const paths = items.map((item) => productLockPath(item.productId));
    return this.locks.withLockAll(paths, (multi) => this.sellAll(items, multi));
  }

  /** The same read-pay-write with no lock and no fence: the oversell this app demonstrates. */
  async placeOrderUnsafe(productId: string, quantity: number): Promise<PlacedOrder> {
    return this.sell(productId, quantity, null, productLockPath(productId));
  }

  /** Exactly one of any number of concurrent cancels puts the quantity back. */
  @DistributedLock('/locks/order:<orderId>')
  async cancel(orderId: number): Promise<CancelledOrder> {
    const path = orderLockPath(orderId);
    const token = heldFencingToken(this.locks, path);
    const claim = await this.store.claimOrder(orderId, token);
    if (claim === 'missing') throw orderNotFound(orderId);
    if (claim === 'stale') throw staleFencingToken(path, token);
    const order = (await this.store.getOrder(orderId))!;
    const result = { orderId, productId: order.productId, quantity: order.quantity };
    if (order.status === 'cancelled') return { ...result, status: 'cancelled', restocked: false };
    await this.payment.refund(orderId);
    await this.restock.putBack(order.productId, order.quantity, orderId, token);
    return { ...result, status: 'cancelled', restocked: true };
  }

  private async sellAll(items: OrderBody[], multi: MultiLockHandle): Promise<PlacedMultiOrder> {
    const tokens = items.map((item) => {
      const i = multi.paths.indexOf(productLockPath(item.productId));
      return multi.fencingTokens[i];
    });
    for (const [i, { productId }] of items.entries()) {
      const claim = await this.store.claimProduct(productId, tokens[i]);
      if (claim === 'missing') throw productNotFound(productId);
      if (claim === 'stale') throw staleFencingToken(productLockPath(productId), tokens[i]);
    }
    const stocks: number[] = [];
    for (const { productId, quantity } of items) {
      const stock = (await this.store.readStock(productId))!;
      if (stock < quantity) throw outOfStock(productId, quantity, stock);
      stocks.push(stock);
    }
    for (const { productId, quantity } of items) await this.payment.charge(productId, quantity);
    const orderIds = await this.store.placeOrders(
      items.map((item, i) => ({ ...item, newStock: stocks[i] - item.quantity, token: tokens[i] })),
    );
    if (!orderIds)
      throw staleFencingToken(items.map((i) => productLockPath(i.productId)).join(', '), tokens[0]);
    return { orderIds, items, fencingTokens: tokens.map(String) };
  }

  private async sell(
    productId: string,
    quantity: number,
    token: bigint | null,
    path: string,
  ): Promise<PlacedOrder> {
    const stock = await this.store.readStock(productId);
    if (stock === null) throw productNotFound(productId);
    if (stock < quantity) throw outOfStock(productId, quantity, stock);
    this.logger.debug(
      `Order ${quantity} x "${productId}": read stock ${stock}` +
        `${token === null ? ' without a lock' : ` holding "${path}" (token ${token})`}, ` +
        `awaiting payment (${this.payment.delayMs} ms)`,
    );
    await this.payment.charge(productId, quantity);
    const orderId = await this.store.placeOrder({
      productId,
      quantity,
      newStock: stock - quantity,
      token,
    });
    if (orderId === null) {
      this.logger.warn(`Fenced write refused for "${path}" (token ${token}): the lock was lost`);
      throw staleFencingToken(path, token!);
    }
    return { orderId, productId, quantity, fencingToken: token === null ? null : String(token) };
  }
}
