import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { parseOrderBody, parseOrderId, parseOrderRequest } from './order-body';
import { CancelledOrder, OrdersService, PlacedMultiOrder, PlacedOrder } from './orders.service';

/** Bodies are checked here, before the service's @DistributedLock methods take any lock. */
@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /** `{ productId, quantity }`, or `{ items: [{ productId, quantity }, ...] }` (all or nothing). */
  @Post()
  place(@Body() body: unknown): Promise<PlacedOrder | PlacedMultiOrder> {
    const order = parseOrderRequest(body);
    if ('items' in order) return this.orders.placeMultiOrder(order.items);
    return this.orders.placeOrder(order.productId, order.quantity);
  }

  /** The same order without the lock: oversells under concurrency. For the demo only. */
  @Post('unsafe')
  placeUnsafe(@Body() body: unknown): Promise<PlacedOrder> {
    const { productId, quantity } = parseOrderBody(body);
    return this.orders.placeOrderUnsafe(productId, quantity);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id') id: string): Promise<CancelledOrder> {
    return this.orders.cancel(parseOrderId(id));
  }
}
