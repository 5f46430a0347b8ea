import { DynamicModule, Module } from '@nestjs/common';
import { ZkLockModule } from 'nestjs-zookeeper-lock';
import { APP_CONFIG, AppConfig } from './config/app-config';
import { OrdersController } from './orders/orders.controller';
import { OrdersService } from './orders/orders.service';
import { RestockService } from './orders/restock.service';
import { PaymentGateway } from './payment/payment.gateway';
import { ProductsController } from './products/products.controller';
import { ProductsService } from './products/products.service';
import { InventoryStoreModule } from './store/inventory-store.module';

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
        InventoryStoreModule.forDatabase(config.database),
      ],
      controllers: [ProductsController, OrdersController],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        PaymentGateway,
        ProductsService,
        OrdersService,
        RestockService,
      ],
    };
  }
}
