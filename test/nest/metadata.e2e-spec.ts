import {
  CanActivate,
  Controller,
  ExecutionContext,
  Get,
  Header,
  HttpCode,
  Param,
  ParseIntPipe,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import request from 'supertest';
import { DistributedLock, LockService } from '../../lib';
import { testNamespace, useLockApp } from './support/nest-app';

/**
 * What @nestjs/swagger's @ApiOperation does (not a dependency here): metadata under
 * 'swagger/apiOperation' on the method function itself.
 */
const ApiOperation = (summary: string) => SetMetadata('swagger/apiOperation', { summary });

class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest().headers['x-allow'] === 'yes';
  }
}

@Controller('items')
class ItemsController {
  constructor(private readonly locks: LockService) {}

  @DistributedLock('/items/<id>')
  @Get(':id/above')
  @UseGuards(HeaderGuard)
  @ApiOperation('lock decorator on top')
  @HttpCode(202)
  @Header('x-handler', 'above')
  above(@Param('id', ParseIntPipe) id: number) {
    return { type: typeof id, held: this.locks.isHeld(`/items/${id}`) };
  }

  @Get(':id/below')
  @UseGuards(HeaderGuard)
  @ApiOperation('lock decorator at the bottom')
  @HttpCode(202)
  @Header('x-handler', 'below')
  @DistributedLock('/items/<id>')
  below(@Param('id', ParseIntPipe) id: number) {
    return { type: typeof id, held: this.locks.isHeld(`/items/${id}`) };
  }
}

describe('@DistributedLock keeps the metadata of other decorators', () => {
  const lockApp = useLockApp(
    { controllers: [ItemsController] },
    { namespace: testNamespace('metadata') },
  );
  const server = () => lockApp.app.getHttpServer();
  const acquiredPaths = () => lockApp.acquired.map((event) => event.path);

  describe.each(['above', 'below'] as const)('lock decorator %s the others', (name) => {
    const method = ItemsController.prototype[name];

    it('keeps route, guard and Swagger metadata and the method name', () => {
      expect(Reflect.getMetadata(PATH_METADATA, method)).toBe(`:id/${name}`);
      expect(Reflect.getMetadata(METHOD_METADATA, method)).toBe(0); // RequestMethod.GET
      expect(Reflect.getMetadata(GUARDS_METADATA, method)).toEqual([HeaderGuard]);
      expect(Reflect.getMetadata('swagger/apiOperation', method)).toEqual({
        summary: `lock decorator ${name === 'above' ? 'on top' : 'at the bottom'}`,
      });
      expect(method.name).toBe(name);
    });

    it('serves the route with its pipes, status code and header under the lock', async () => {
      const res = await request(server()).get(`/items/5/${name}`).set('x-allow', 'yes').expect(202);
      expect(res.headers['x-handler']).toBe(name);
      expect(res.body).toEqual({ type: 'number', held: true });
      expect(acquiredPaths()).toEqual(['/items/5']);
    });

    it('runs the guard first: a refused request locks nothing', async () => {
      await request(server()).get(`/items/5/${name}`).expect(403);
      expect(acquiredPaths()).toEqual([]);
    });
  });
});
