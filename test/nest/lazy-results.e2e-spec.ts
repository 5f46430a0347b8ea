/**
 * Results consumed after the method returns hold the lock until they have
 * finished: a stream (Readable, StreamableFile) from a string-template handler (interceptor) and
 * from a function-template handler (wrapper), a response the handler writes itself (@Res()), an
 * async generator and a Promise<Observable> from a service, and an endless Observable streamed
 * (not buffered) until its subscriber unsubscribes.
 */
import { Controller, Get, Injectable, Param, Res, StreamableFile } from '@nestjs/common';
import { get, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { interval, Observable, take } from 'rxjs';
import { DistributedLock, LockService, ZkLockClient } from '../../lib';
import { Gate, testNamespace, useLockApp, waitFor, zkConnect } from './support/nest-app';

const gates = new Map<string, Gate>();
const gate = (id: string): Gate => {
  if (!gates.has(id)) gates.set(id, new Gate());
  return gates.get(id)!;
};

/** A stream that sends "first", then "last" once the test opens the gate `id`. */
function gatedStream(id: string): Readable {
  let step = 0;
  return new Readable({
    read() {
      if (step++ === 0) this.push('first;');
      else void gate(id).opened.then(() => (this.push('last'), this.push(null)));
    },
  });
}

@Controller('lazy')
class LazyController {
  @Get('stream/:id')
  @DistributedLock('/lazy/<id>')
  stream(@Param('id') id: string) {
    return new StreamableFile(gatedStream(id));
  }

  @Get('fn-stream/:id')
  @DistributedLock((id: string) => `/lazy/${id}`)
  fnStream(@Param('id') id: string) {
    return new StreamableFile(gatedStream(id));
  }

  @Get('res/:id')
  @DistributedLock('/lazy/<id>')
  writeItself(@Param('id') id: string, @Res() res: ServerResponse) {
    res.write('first;');
    void gate(id).opened.then(() => res.end('last'));
  }
}

@Injectable()
class LazyService {
  constructor(private readonly locks: LockService) {}

  @DistributedLock('/lazy/<id>')
  async *generate(id: string): AsyncGenerator<boolean> {
    yield this.locks.isHeld(`/lazy/${id}`);
    await gate(id).opened;
    yield this.locks.isHeld(`/lazy/${id}`);
  }

  @DistributedLock('/lazy/<id>')
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the template reads it by name
  async later(id: string): Promise<Observable<number>> {
    return interval(5); // endless
  }
}

/** GETs `path` and resolves once the first chunk arrived, with the rest of the body to come. */
function startGet(port: number, path: string): Promise<{ first: string; rest: Promise<string> }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res: IncomingMessage) => {
      res.setEncoding('utf8');
      let body = '';
      const rest = new Promise<string>((done) => res.on('end', () => done(body)));
      res.once('data', (chunk: string) => {
        body += chunk;
        res.on('data', (more: string) => (body += more));
        resolve({ first: chunk, rest });
      });
    }).on('error', reject);
  });
}

describe('lazy results hold the lock until they have finished', () => {
  const namespace = testNamespace('lazy-results');
  const lockApp = useLockApp(
    { controllers: [LazyController], providers: [LazyService] },
    { namespace },
  );
  let other: ZkLockClient;
  let port: number;

  beforeAll(async () => {
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
    await lockApp.app.listen(0, '127.0.0.1');
    port = (lockApp.app.getHttpServer().address() as { port: number }).port;
  });
  afterAll(() => other.close());

  /** Nobody else can take `/lazy/<id>` now. */
  const expectHeld = async (id: string): Promise<void> =>
    expect(await other.tryAcquire(`/lazy/${id}`)).toBeNull();
  const expectFree = async (id: string): Promise<void> => {
    let lock = await other.tryAcquire(`/lazy/${id}`);
    await waitFor(
      async () => !!(lock ??= await other.tryAcquire(`/lazy/${id}`)),
      `/lazy/${id} free`,
    );
    await lock!.release();
  };

  it.each([
    ['a StreamableFile from a string-template handler', 'stream', 's1'],
    ['a StreamableFile from a function-template handler', 'fn-stream', 's2'],
    ['a response the handler writes itself (@Res())', 'res', 's3'],
  ])('%s', async (_, route, id) => {
    const { first, rest } = await startGet(port, `/lazy/${route}/${id}`);
    expect(first).toBe('first;');
    await expectHeld(id);
    gate(id).open();
    expect(await rest).toBe('first;last');
    await expectFree(id);
  });

  it('an async generator from a service: held (and re-entrant) until it returns', async () => {
    // Like every decorated method, it returns a Promise: of the iterator here.
    const iterator = await (lockApp.app.get(LazyService).generate('g1') as unknown as Promise<
      AsyncGenerator<boolean>
    >);
    expect((await iterator.next()).value).toBe(true);
    await expectHeld('g1');
    gate('g1').open();
    expect((await iterator.next()).value).toBe(true);
    expect((await iterator.next()).done).toBe(true);
    await expectFree('g1');
  });

  it('an endless Observable behind a Promise: streamed, not buffered, held until unsubscribed', async () => {
    const values = await lockApp.app.get(LazyService).later('o1');
    const seen: number[] = [];
    const subscription = values.subscribe((v) => seen.push(v));
    await waitFor(() => seen.length >= 2, 'values while the Observable runs');
    await expectHeld('o1');
    subscription.unsubscribe();
    await expectFree('o1');
    const three = await new Promise<number[]>((resolve) => {
      const got: number[] = [];
      void lockApp.app
        .get(LazyService)
        .later('o2')
        .then((obs) =>
          obs.pipe(take(3)).subscribe({ next: (v) => got.push(v), complete: () => resolve(got) }),
        );
    });
    expect(three).toEqual([0, 1, 2]);
    await expectFree('o2');
  });
});
