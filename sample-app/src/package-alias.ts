/**
 * This repository IS the `nestjs-zookeeper-lock` package, so the sample app maps the package name
 * to the library's source (sample-app/tsconfig.json does the same for the type checker).
 * In your own project, `npm install nestjs-zookeeper-lock` and delete this file.
 */
import { join } from 'node:path';
import { register } from 'tsconfig-paths';

register({
  baseUrl: join(__dirname, '..', '..'),
  paths: { 'nestjs-zookeeper-lock': ['lib/index'] },
  addMatchAll: false,
});
