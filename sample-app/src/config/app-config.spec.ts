import { DEFAULT_SQLITE_FILE, loadConfig, parseDatabaseUrl } from './app-config';

describe('app configuration', () => {
  it('has defaults for everything: SQLite under .data/, ZooKeeper on localhost', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      zkConnect: '127.0.0.1:2181',
      sessionTimeoutMs: 10_000,
      lockWaitTimeoutMs: 30_000,
      stockIoDelayMs: 20,
      database: { kind: 'sqlite', file: DEFAULT_SQLITE_FILE },
      zkNamespace: undefined,
      logLevel: 'log',
      instanceName: `sample-app-${process.pid}`,
    });
    expect(DEFAULT_SQLITE_FILE).toMatch(/\.data[/\\]inventory\.sqlite$/);
  });

  it('reads DATABASE_URL as sqlite:<file> or postgres://', () => {
    expect(parseDatabaseUrl('sqlite:/tmp/x.sqlite')).toEqual({
      kind: 'sqlite',
      file: '/tmp/x.sqlite',
    });
    expect(parseDatabaseUrl('postgres://u@h:5432/db')).toEqual({
      kind: 'postgres',
      url: 'postgres://u@h:5432/db',
    });
    expect(() => parseDatabaseUrl('mysql://x')).toThrow(/not supported.*sqlite:<file> or postgres/);
  });

  it('names the scheme and host of an unsupported DATABASE_URL, never its user or password', () => {
    const refused = (url: string) => {
      try {
        parseDatabaseUrl(url);
        return 'accepted';
      } catch (err) {
        return (err as Error).message;
      }
    };
    for (const url of [
      'mysql://app:s3cret@db/inv',
      'postgress://app:s3cret@db:5432/inv?sslmode=require',
      'mysql://app:p@ss:w@rd@db/inv',
      'mysql:app:s3cret@db',
    ]) {
      const message = refused(url);
      expect(message).toMatch(/^DATABASE_URL .* is not supported/);
      expect(message).not.toMatch(/s3cret|p@ss|w@rd|\bapp\b/);
    }
    expect(refused('mysql://app:s3cret@db/inv')).toMatch(/^DATABASE_URL \(mysql:\/\/db\) is not/);
    expect(refused('postgress://app:s3cret@db:5432/inv')).toMatch(
      /^DATABASE_URL \(postgress:\/\/db:5432\) is not/,
    );
    expect(refused('mysql:app:s3cret@db')).toMatch(
      /^DATABASE_URL \(not of the form scheme:\/\/host, so not shown\) is not/,
    );
  });

  it('names the variable, the value and the default when a number is wrong', () => {
    expect(() => loadConfig({ STOCK_IO_DELAY_MS: 'soon' })).toThrow(
      'STOCK_IO_DELAY_MS="soon" must be an integer >= 0 (default 20).',
    );
  });
});
