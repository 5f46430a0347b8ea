import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { InventoryStore } from './inventory.store';

/** Closes the database connections when the app shuts down. */
@Injectable()
export class StoreShutdown implements OnApplicationShutdown {
  constructor(private readonly store: InventoryStore) {}

  onApplicationShutdown(): Promise<void> {
    return this.store.close();
  }
}
