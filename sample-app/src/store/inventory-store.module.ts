import { DynamicModule, Module, OnApplicationShutdown } from '@nestjs/common';
import type { DatabaseConfig } from '../config/app-config';
import { InventoryStore } from './inventory.store';
import { PostgresInventoryStore } from './postgres-inventory.store';
import { SqliteInventoryStore } from './sqlite-inventory.store';

/**
 * Provides the InventoryStore named by DATABASE_URL, migrated before the app serves requests,
 * and closes its connections when the app shuts down.
 */
@Module({})
export class InventoryStoreModule implements OnApplicationShutdown {
  constructor(private readonly store: InventoryStore) {}

  static forDatabase(database: DatabaseConfig): DynamicModule {
    return {
      module: InventoryStoreModule,
      providers: [{ provide: InventoryStore, useFactory: () => openStore(database) }],
      exports: [InventoryStore],
    };
  }

  onApplicationShutdown(): Promise<void> {
    return this.store.close();
  }
}

async function openStore(database: DatabaseConfig): Promise<InventoryStore> {
  const store =
    database.kind === 'postgres'
      ? new PostgresInventoryStore(database.url)
      : new SqliteInventoryStore(database.file);
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
  return store;
}
