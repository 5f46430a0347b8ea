import { parseConnectionString, withoutUserInfo } from './connection-string';

describe('parseConnectionString', () => {
  it.each([
    ['zk1:2181', { servers: [{ host: 'zk1', port: 2181 }] }],
    ['zk1', { servers: [{ host: 'zk1', port: 2181 }] }],
    [
      '10.0.0.1:2281,zk-2.example.com:2182/app/locks',
      {
        servers: [
          { host: '10.0.0.1', port: 2281 },
          { host: 'zk-2.example.com', port: 2182 },
        ],
        chroot: '/app/locks',
      },
    ],
    ['zk1:1/', { servers: [{ host: 'zk1', port: 1 }] }],
    ['zk1:65535', { servers: [{ host: 'zk1', port: 65535 }] }],
  ])('%s: its servers and chroot', (value, parsed) => {
    expect(parseConnectionString(value)).toEqual({ ok: true, parsed });
  });

  it.each([
    ['orders:S3cret@127.0.0.1:2181', 'server 1 carries user information ("user:password@")'],
    ['zk1:2181,orders:S3cret@zk2', 'server 2 carries user information'],
    ['127.0.0.1:abc', 'the port of server 1 ("127.0.0.1") is not a number'],
    ['127.0.0.1:99999', 'the port of server 1 ("127.0.0.1") is 99999, not 1 to 65535'],
    ['127.0.0.1:0', 'the port of server 1 ("127.0.0.1") is 0, not 1 to 65535'],
    ['127.0.0.1:-1', 'the port of server 1 ("127.0.0.1") is not a number'],
    ['127.0.0.1:', 'the port of server 1 ("127.0.0.1") is not a number'],
    ['zk1:2181,,zk2:2181', 'server 2 is empty (a stray comma)'],
    ['zk1:2181,', 'server 2 is empty (a stray comma)'],
    ['/app', 'no server is given'],
    ['[::1]:2181', 'server 1 ("[::1]:2181") is not host:port'],
    ['zk1:2181:2182', 'server 1 ("zk1:2181:2182") is not host:port'],
    [' zk1:2181', 'server 1 (" zk1:2181") is not host:port'],
    ['zk1:2181/app//locks', 'the chroot path "/app//locks" is not a ZooKeeper path'],
    ['zk1:2181/app/../x', 'the chroot path "/app/../x" is not a ZooKeeper path'],
  ])('%s: refused, naming the bad part', (value, reason) => {
    const result = parseConnectionString(value);
    expect(result).toEqual({ ok: false, reason: expect.stringContaining(reason) });
    // Never the user information, nor a port that is not a number.
    expect(JSON.stringify(result)).not.toMatch(/S3cret|orders|abc/);
  });

  it('shows at most 100 characters of a long part', () => {
    const result = parseConnectionString(`${'h'.repeat(5000)}!:2181`);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result).length).toBeLessThan(400);
  });
});

describe('withoutUserInfo', () => {
  it.each([
    ['orders:S3cret@zk1:2181', 'zk1:2181'],
    ['zk1:2181,orders:S3cret@zk2:2181/app', 'zk1:2181,zk2:2181/app'],
    ['zk1:2181/app', 'zk1:2181/app'],
  ])('%s is shown as %s', (value, shown) => {
    expect(withoutUserInfo(value)).toBe(shown);
  });
});
