/**
 * Preludes of snippets that are fragments (a class without its imports, calls on a client set up
 * elsewhere): `<!-- snippet: prelude=<name> -->` on the line above the block wraps it in `head`
 * and `tail` before the type check. Each says what the reader is assumed to have.
 */

/** The imports a NestJS file of these docs uses, as an editor would add them. */
const NEST_IMPORTS = `import {
  ArgumentsHost, Body, Catch, Controller, ExceptionFilter, Get, Injectable, Module, Param,
  ParseIntPipe, Post, Query,
} from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { Args, Int, Mutation, Resolver } from '@nestjs/graphql';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import {
  DistributedLock, DistributedSemaphore, encodePathSegment, InjectZkLockClient, LockService,
  toHttpError, ZkLockClient, ZkLockHealthIndicator, ZkLockModule,
} from 'nestjs-zookeeper-lock';
`;

/** The reader's own functions the core examples call. */
const USER_CODE = `declare function chargeAndShip(token: bigint, signal: AbortSignal): Promise<void>;
declare function work(token: bigint): Promise<string>;
declare function readConfig(token: bigint): Promise<string>;
declare function writeConfig(token: bigint): Promise<void>;
declare function render(doc: { id: string }, signal: AbortSignal): Promise<void>;
declare const doc: { id: string };
declare const paths: string[];
declare const db: { query(sql: string, params: unknown[]): Promise<unknown> };
`;

export const PRELUDES: Record<string, { head: string; tail?: string }> = {
  /** A NestJS class or call, with every import it may need. */
  'nest-imports': { head: NEST_IMPORTS },
  /** A core example that calls the reader's own functions (declared, not shown). */
  'core-work': { head: USER_CODE },
  /** Calls on a connected client `locks`, as the recipe pages set it up. */
  'core-client': {
    head: `import { fencingTokenText, ZkLockClient } from 'nestjs-zookeeper-lock/core';
${USER_CODE}declare const locks: ZkLockClient;
declare const signal: AbortSignal;
`,
  },
  /** main.ts of an app whose root module is \`AppModule\`. */
  'app-module': { head: `declare class AppModule {}\n` },
};
