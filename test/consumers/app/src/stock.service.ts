import { Injectable } from '@nestjs/common';
import { DistributedLock } from 'nestjs-zookeeper-lock';

/** A read-modify-write with an await inside: without the lock, concurrent calls oversell. */
@Injectable()
export class StockService {
  private readonly stock = new Map<string, number>();

  level(product: string): number {
    return this.stock.get(product) ?? 100;
  }

  @DistributedLock('/locks/consumer/product:<product>', { waitTimeoutMs: 60_000 })
  async deduct(product: string, quantity: number): Promise<number> {
    const current = this.level(product);
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.stock.set(product, current - quantity);
    return current - quantity;
  }
}
