import './package-alias'; // first: maps 'nestjs-zookeeper-lock' to this repository's lib/
import 'reflect-metadata';
import { Logger, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { loadConfig } from './config/app-config';

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** `npm run start:sample`: one instance; see docs/sample-app.md for the environment variables. */
async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const level = LEVELS.indexOf(config.logLevel as LogLevel);
  const app = await NestFactory.create(AppModule.forConfig(config), {
    logger: LEVELS.slice(0, (level === -1 ? LEVELS.indexOf('log') : level) + 1),
  });
  app.enableShutdownHooks();
  // Idle keep-alive connections stay open longer than any client pool keeps them (Node's 5 s
  // default races a client that reuses the socket as the server closes it: ECONNRESET under load).
  const server = app.getHttpServer() as import('node:http').Server;
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await app.listen(config.port, config.host);
  const store = config.database.kind === 'sqlite' ? `sqlite:${config.database.file}` : 'postgres';
  new Logger('SampleApp').log(
    `${config.instanceName} listening on http://${config.host}:${config.port} ` +
      `(store ${store}, ZooKeeper ${config.zkConnect}, payment delay ${config.stockIoDelayMs} ms)`,
  );
}

bootstrap().catch((err) => {
  new Logger('SampleApp').error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
