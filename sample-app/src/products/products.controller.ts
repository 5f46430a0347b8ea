import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ProductView } from '../store/inventory.store';
import { parseProductId, parseStockBody } from './product-body';
import { ProductsService } from './products.service';

@Controller('products')
export class ProductsController {
  constructor(private readonly products: ProductsService) {}

  @Put(':id')
  setStock(@Param('id') id: string, @Body() body: unknown): Promise<ProductView> {
    return this.products.setStock(parseProductId(id, 'product id'), parseStockBody(body));
  }

  @Get(':id')
  get(@Param('id') id: string): Promise<ProductView> {
    return this.products.get(parseProductId(id, 'product id'));
  }
}
