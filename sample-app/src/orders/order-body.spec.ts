import { BadRequestException } from '@nestjs/common';
import { MAX_ITEMS, parseOrderBody, parseOrderId, parseOrderRequest } from './order-body';

function errorOf(fn: () => unknown): { error: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestException);
    return (err as BadRequestException).getResponse() as { error: string; message: string };
  }
  throw new Error('expected a BadRequestException');
}

describe('parseOrderBody', () => {
  it('accepts a product id (string or integer) and a positive integer quantity', () => {
    expect(parseOrderBody({ productId: 'apple', quantity: 2 })).toEqual({
      productId: 'apple',
      quantity: 2,
    });
    expect(parseOrderBody({ productId: 42, quantity: 1 })).toEqual({
      productId: '42',
      quantity: 1,
    });
  });

  it.each([
    [{ quantity: 1 }, 'INVALID_PRODUCT_ID', 'productId is missing'],
    [{ productId: '', quantity: 1 }, 'INVALID_PRODUCT_ID', 'productId is missing'],
    [{ productId: 'a/b', quantity: 1 }, 'INVALID_PRODUCT_ID', 'not a valid product id'],
    [{ productId: ['a'], quantity: 1 }, 'INVALID_PRODUCT_ID', 'not a valid product id'],
    [{ productId: 'a' }, 'INVALID_ORDER', 'quantity is missing'],
    [{ productId: 'a', quantity: 0 }, 'INVALID_ORDER', 'from 1 to'],
    [{ productId: 'a', quantity: 2.5 }, 'INVALID_ORDER', 'from 1 to'],
    [{ productId: 'a', quantity: '3' }, 'INVALID_ORDER', 'from 1 to'],
    [null, 'INVALID_ORDER', 'JSON object'],
    [[1], 'INVALID_ORDER', 'JSON object'],
  ])('rejects %j with %s', (body, error, message) => {
    const response = errorOf(() => parseOrderBody(body));
    expect(response.error).toBe(error);
    expect(response.message).toContain(message);
  });
});

describe('parseOrderId', () => {
  it('accepts positive integers only', () => {
    expect(parseOrderId('17')).toBe(17);
    for (const bad of ['0', '-1', '1.5', 'abc', '1e3', '9999999999999999']) {
      expect(errorOf(() => parseOrderId(bad)).error).toBe('INVALID_ORDER_ID');
    }
  });
});

describe('parseOrderRequest', () => {
  it('takes a single product as parseOrderBody does', () => {
    expect(parseOrderRequest({ productId: 'a', quantity: 1 })).toEqual({
      productId: 'a',
      quantity: 1,
    });
  });

  it('takes items, adding up the quantities of a product named twice', () => {
    const body = {
      items: [
        { productId: 'b', quantity: 1 },
        { productId: 'a', quantity: 2 },
        { productId: 'b', quantity: 3 },
      ],
    };
    expect(parseOrderRequest(body)).toEqual({
      items: [
        { productId: 'b', quantity: 4 },
        { productId: 'a', quantity: 2 },
      ],
    });
  });

  it.each([
    [{ items: [] }, 'INVALID_ORDER', 'array of 1 to'],
    [{ items: 'a' }, 'INVALID_ORDER', 'array of 1 to'],
    [
      { items: Array(MAX_ITEMS + 1).fill({ productId: 'a', quantity: 1 }) },
      'INVALID_ORDER',
      'array of 1 to',
    ],
    [{ items: [{ productId: 'a', quantity: 0 }] }, 'INVALID_ORDER', 'from 1 to'],
    [
      { items: [{ productId: '../x', quantity: 1 }] },
      'INVALID_PRODUCT_ID',
      'not a valid product id',
    ],
  ])('rejects %j with %s', (body, error, message) => {
    const response = errorOf(() => parseOrderRequest(body));
    expect(response.error).toBe(error);
    expect(response.message).toContain(message);
  });
});
