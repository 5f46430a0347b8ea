import { BadRequestException } from '@nestjs/common';
import { parseProductId } from '../products/product-body';

export interface OrderBody {
  productId: string;
  quantity: number;
}

export const MAX_QUANTITY = 1_000_000;
export const MAX_ITEMS = 20;

/** A POST /orders body: one product, or several taken together (all or nothing). */
export type OrderRequest = { items: OrderBody[] } | OrderBody;

/**
 * Checks a POST /orders body before any lock is taken: a bad request never queues for a lock
 * and never reaches the store. Throws 400 with a message that says what to send instead.
 */
export function parseOrderBody(body: unknown): OrderBody {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('the body must be a JSON object like {"productId": "apple", "quantity": 1}');
  }
  const { productId, quantity } = body as Record<string, unknown>;
  return { productId: parseProductId(productId, 'productId'), quantity: parseQuantity(quantity) };
}

function parseQuantity(value: unknown): number {
  if (value === undefined || value === null)
    throw invalid('quantity is missing: send a positive integer');
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_QUANTITY) {
    throw invalid(`quantity ${JSON.stringify(value)} must be an integer from 1 to ${MAX_QUANTITY}`);
  }
  return value;
}

/**
 * A body with `items` (`[{ productId, quantity }, ...]`, 1 to MAX_ITEMS of them) orders several
 * products at once; the same product named twice counts once with the quantities added.
 */
export function parseOrderRequest(body: unknown): OrderRequest {
  if (body === null || typeof body !== 'object' || !('items' in body)) return parseOrderBody(body);
  const { items } = body as { items: unknown };
  if (!Array.isArray(items) || items.length === 0 || items.length > MAX_ITEMS) {
    throw invalid(
      `items must be an array of 1 to ${MAX_ITEMS} objects like {"productId": "apple", "quantity": 1}`,
    );
  }
  const merged = new Map<string, number>();
  for (const item of items.map(parseOrderBody)) {
    merged.set(item.productId, (merged.get(item.productId) ?? 0) + item.quantity);
  }
  return { items: [...merged].map(([productId, quantity]) => ({ productId, quantity })) };
}

/** Order ids in the URL: positive integers. */
export function parseOrderId(value: string): number {
  const id = Number(value);
  if (!/^\d{1,15}$/.test(value) || !Number.isSafeInteger(id) || id <= 0) {
    throw new BadRequestException({
      error: 'INVALID_ORDER_ID',
      message: `order id "${value}" must be a positive integer, as returned by POST /orders`,
    });
  }
  return id;
}

function invalid(message: string): BadRequestException {
  return new BadRequestException({ error: 'INVALID_ORDER', message });
}
