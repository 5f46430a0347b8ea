import { parseDemoArgs } from './demo-options';

const defaults = {
  store: 'sqlite',
  orders: 1000,
  stock: 100,
  delay: 20,
  sessionTimeoutMs: 2000,
  out: '.data/demo',
  embeddedZooKeeper: false,
};

const reason = (args: string[]): string => {
  const parsed = parseDemoArgs(args, 'sqlite');
  return parsed.ok ? `accepted: ${JSON.stringify(parsed.options)}` : parsed.reason;
};

describe("the demo's command line", () => {
  it('has defaults for everything, the store given by the caller', () => {
    expect(parseDemoArgs([], 'sqlite')).toEqual({ ok: true, options: defaults });
    expect(parseDemoArgs([], 'postgres')).toEqual({
      ok: true,
      options: { ...defaults, store: 'postgres' },
    });
  });

  it('reads --name value and --name=value alike', () => {
    const args = [
      ...['--store', 'postgres', '--orders=500', '--stock', '50', '--delay=5'],
      ...['--session-timeout', '3000', '--out=/tmp/demo', '--embedded-zookeeper'],
    ];
    expect(parseDemoArgs(args, 'sqlite')).toEqual({
      ok: true,
      options: {
        store: 'postgres',
        orders: 500,
        stock: 50,
        delay: 5,
        sessionTimeoutMs: 3000,
        out: '/tmp/demo',
        embeddedZooKeeper: true,
      },
    });
  });

  it('refuses a value that is not one the option accepts, saying which are', () => {
    expect(reason(['--store', 'foo'])).toBe('--store "foo": expected sqlite or postgres');
    expect(reason(['--orders', 'abc'])).toBe('--orders "abc": expected a whole number >= 1');
    expect(reason(['--stock=0'])).toBe('--stock "0": expected a whole number >= 1');
    expect(reason(['--delay', '1.5'])).toBe('--delay "1.5": expected a whole number >= 1');
    expect(reason(['--embedded-zookeeper=yes'])).toBe(
      '--embedded-zookeeper takes no value (got "yes")',
    );
  });

  it('refuses an option without its value rather than take the default', () => {
    expect(reason(['--orders'])).toBe('--orders needs a value: a whole number >= 1');
    expect(reason(['--orders='])).toBe('--orders needs a value: a whole number >= 1');
    expect(reason(['--orders', '--stock', '5'])).toBe(
      '--orders needs a value: a whole number >= 1',
    );
    expect(reason(['--out'])).toBe('--out needs a value: a folder for the report and the logs');
  });

  it('refuses an unknown argument, naming the options there are', () => {
    expect(reason(['--order', '5'])).toBe(
      'unknown argument "--order"; the options are --store sqlite|postgres, --orders <n>, ' +
        '--stock <n>, --delay <ms>, --session-timeout <ms>, --out <folder>, --embedded-zookeeper',
    );
    expect(reason(['500'])).toMatch(/^unknown argument "500"; the options are /);
  });
});
