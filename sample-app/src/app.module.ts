import { DynamicModule, Module } from '@nestjs/common';
import { ZkLockModule } from 'nestjs-zookeeper-lock';
import { AppConfig } from './config/app-config';
import { APP_CONFIG } from './config/app-config.provider';
import { OrdersController } from './orders/orders.controller';
import { OrdersService } from './orders/orders.service';
import { RestockService } from './orders/restock.service';
import { PaymentGateway } from './payment/payment.gateway';
import { ProductsController } from './products/products.controller';
import { ProductsService } from './products/products.service';
import { StoreShutdown } from './store/store-shutdown';
import { inventoryStoreProvider } from './store/store.provider';

@Module({})
export class AppModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ZkLockModule.forRoot({
          connectionString: config.zkConnect,
          sessionTimeoutMs: config.sessionTimeoutMs,
          namespace: config.zkNamespace,
          waitTimeoutMs: config.lockWaitTimeoutMs,
          nodeData: { app: 'inventory', instance: config.instanceName },
        }),
      ],
      controllers: [ProductsController, OrdersController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        inventoryStoreProvider,
        StoreShutdown,
        PaymentGateway,
        ProductsService,
        OrdersService,
        RestockService,
      ],
    };
  }
}
