import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/**
 * Stands in for the outside call made between reading and writing stock (pricing, payment):
 * `STOCK_IO_DELAY_MS` of waiting. That await is the window in which unlocked requests read the
 * same stock and oversell.
 */
@Injectable()
export class PaymentGateway {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get delayMs(): number {
    return this.config.stockIoDelayMs;
  }

  charge(_productId: string, _quantity: number): Promise<void> {
    return this.wait();
  }

  refund(_orderId: number): Promise<void> {
    return this.wait();
  }

  private wait(): Promise<void> {
    const ms = this.config.stockIoDelayMs;
    return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
  }
}
