/**
 * The part of @nestjs/config (4.x) the docs use, with its real signatures: the snippets show the
 * usual ConfigService pattern, and this project does not depend on @nestjs/config.
 */
declare module '@nestjs/config' {
  import type { DynamicModule } from '@nestjs/common';

  export class ConfigModule {
    static forRoot(options?: {
      isGlobal?: boolean;
      envFilePath?: string | string[];
    }): Promise<DynamicModule>;
  }

  export class ConfigService<K = Record<string, unknown>> {
    get<T = any>(propertyPath: keyof K & string): T | undefined;
    get<T = any>(propertyPath: keyof K & string, defaultValue: NoInfer<T>): T;
    getOrThrow<T = any>(
      propertyPath: keyof K & string,
      defaultValue?: NoInfer<T>,
    ): Exclude<T, undefined>;
  }
}
