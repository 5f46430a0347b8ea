import { ConflictException, NotFoundException } from '@nestjs/common';

/** The HTTP answers of the inventory, each with a stable `error` code and an actionable message. */
export const outOfStock = (productId: string, quantity: number, stock: number): ConflictException =>
  new ConflictException({
    error: 'OUT_OF_STOCK',
    message: `Product "${productId}" has ${stock} in stock, ${quantity} requested. Order less or restock.`,
  });

export const productNotFound = (productId: string): NotFoundException =>
  new NotFoundException({
    error: 'PRODUCT_NOT_FOUND',
    message: `Product "${productId}" does not exist. Create it with PUT /products/${productId} {"stock": 100}.`,
  });

export const orderNotFound = (orderId: number): NotFoundException =>
  new NotFoundException({
    error: 'ORDER_NOT_FOUND',
    message: `Order ${orderId} does not exist (or its product was reset with PUT /products/:id).`,
  });

/**
 * The store holds a newer fencing token than ours: this request's lock expired while it worked
 * (a pause longer than the session timeout) and another holder has written since. Nothing was
 * written; retrying is safe.
 */
export const staleFencingToken = (path: string, token: bigint): ConflictException =>
  new ConflictException({
    error: 'STALE_FENCING_TOKEN',
    message:
      `Write refused: the lock "${path}" (fencing token ${token}) was lost while this request held it ` +
      'and a newer holder has written since. Nothing was changed; retry the request. ' +
      '(If ZooKeeper was replaced by a new one, its tokens start lower: use a fresh database.)',
  });
