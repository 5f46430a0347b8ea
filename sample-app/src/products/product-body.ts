import { BadRequestException } from '@nestjs/common';

/** Product ids: 1-64 letters, digits, `_`, `-` or `.` (they end up in a lock path segment). */
export const PRODUCT_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** A product id from a body field or the URL; numbers are accepted as their decimal text. */
export function parseProductId(value: unknown, field: string): string {
  if (value === undefined || value === null || value === '') {
    throw invalidId(`${field} is missing: send the id of an existing product, e.g. "apple"`);
  }
  const id = typeof value === 'number' && Number.isInteger(value) ? String(value) : value;
  if (typeof id !== 'string' || !PRODUCT_ID.test(id)) {
    throw invalidId(
      `${field} ${JSON.stringify(value)} is not a valid product id (1-64 of A-Z a-z 0-9 _ - .)`,
    );
  }
  return id;
}

/** PUT /products/:id body: `{ "stock": <integer >= 0> }`. */
export function parseStockBody(body: unknown): number {
  const stock =
    body && typeof body === 'object' ? (body as Record<string, unknown>).stock : undefined;
  if (typeof stock !== 'number' || !Number.isInteger(stock) || stock < 0 || stock > 1_000_000_000) {
    throw new BadRequestException({
      error: 'INVALID_STOCK',
      message: `stock ${JSON.stringify(stock)} must be an integer from 0 to 1000000000, e.g. {"stock": 100}`,
    });
  }
  return stock;
}

function invalidId(message: string): BadRequestException {
  return new BadRequestException({ error: 'INVALID_PRODUCT_ID', message });
}
