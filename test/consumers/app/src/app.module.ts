import { Module } from '@nestjs/common';
import { ZkLockModule } from 'nestjs-zookeeper-lock';
import { StockController } from './stock.controller.js';
import { StockService } from './stock.service.js';

@Module({
  imports: [
    ZkLockModule.forRoot({ connectionString: process.env.ZK_CONNECT ?? '', isGlobal: true }),
  ],
  controllers: [StockController],
  providers: [StockService],
})
export class AppModule {}
