import { Provider } from '@nestjs/common';
import { APP_CONFIG } from '../config/app-config.provider';
import type { AppConfig } from '../config/app-config';
import { InventoryStore } from './inventory.store';
import { PostgresInventoryStore } from './postgres-inventory.store';
import { SqliteInventoryStore } from './sqlite-inventory.store';

/** The store named by DATABASE_URL, migrated before the app serves requests. */
export const inventoryStoreProvider: Provider = {
  provide: InventoryStore,
  inject: [APP_CONFIG],
  useFactory: async (config: AppConfig): Promise<InventoryStore> => {
    const store =
      config.database.kind === 'postgres'
        ? new PostgresInventoryStore(config.database.url)
        : new SqliteInventoryStore(config.database.file);
    try {
      await store.migrate();
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
    return store;
  },
};
