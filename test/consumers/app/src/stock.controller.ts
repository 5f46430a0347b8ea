import { Controller, Get, Param, Post } from '@nestjs/common';
import { DistributedLock } from 'nestjs-zookeeper-lock';
import { StockService } from './stock.service.js';

@Controller('stock')
export class StockController {
  private handled = 0;

  constructor(private readonly stock: StockService) {}

  @Get(':product')
  level(@Param('product') product: string): { level: number } {
    return { level: this.stock.level(product) };
  }

  /** A handler holding its own lock while the service takes another (both on ZooKeeper). */
  @Post(':product/deduct')
  @DistributedLock('/locks/consumer/orders', { waitTimeoutMs: 60_000 })
  async deduct(@Param('product') product: string): Promise<{ level: number; handled: number }> {
    const level = await this.stock.deduct(product, 1);
    return { level, handled: ++this.handled };
  }
}
