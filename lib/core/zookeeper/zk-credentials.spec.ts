import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { ACL } from './zk-client';
import { InvalidLockOptionsError } from '../errors';
import { ZkCredentials, withoutSecrets } from './zk-credentials';
import { MAX_REQUEST_BYTES } from './jute';

const SECRET = 's3cret-Pa55';

describe('ZkCredentials', () => {
  it('encodes one AUTH request per credential, as the Java client sends them', () => {
    const credentials = ZkCredentials.from({ auth: [`app:${SECRET}`, 'ops:x'] });
    const [first, second] = credentials.authPackets();
    // int32 length | xid -4 | type 100 (auth) | int32 0 | "digest" | buffer "app:..."
    expect(first.readInt32BE(0)).toBe(first.length - 4);
    expect(first.readInt32BE(4)).toBe(-4);
    expect(first.readInt32BE(8)).toBe(100);
    expect(first.readInt32BE(12)).toBe(0);
    expect(first.subarray(20, 26).toString()).toBe('digest');
    expect(first.subarray(30).toString()).toBe(`app:${SECRET}`);
    expect(second.subarray(30).toString()).toBe('ops:x');
    expect(credentials.authCount).toBe(2);
  });

  it('refuses an entry whose AUTH request would be over the request limit, not showing it', () => {
    // An AUTH request is 26 bytes and the entry: the longest entry that fits, then one more byte.
    const fits = `app:${'p'.repeat(MAX_REQUEST_BYTES - 26 - 4)}`;
    const [packet] = ZkCredentials.from({ auth: fits }).authPackets();
    expect(packet.length - 4).toBe(MAX_REQUEST_BYTES);
    const tooLong = () => ZkCredentials.from({ auth: ['ops:x', `${fits}p`] });
    expect(tooLong).toThrow(InvalidLockOptionsError);
    expect(tooLong).toThrow(
      `auth entry 2 of 2 makes an AUTH request of ${MAX_REQUEST_BYTES + 1} bytes, over the ` +
        `limit of ${MAX_REQUEST_BYTES} bytes`,
    );
    expect(tooLong).not.toThrow(/ppp/);
  });

  it("gives CREATOR_ALL_ACL for 'creator' and OPEN_ACL_UNSAFE by default", () => {
    expect(ZkCredentials.from({}).aclList).toBe(ACL.OPEN_ACL_UNSAFE);
    expect(ZkCredentials.from({ auth: 'a:b', acl: 'creator' }).aclList).toBe(ACL.CREATOR_ALL_ACL);
  });

  it('prints itself redacted (util.inspect, JSON), at any depth', () => {
    const credentials = ZkCredentials.from({ auth: `app:${SECRET}`, acl: 'creator' });
    const shown = [
      inspect(credentials, { depth: Infinity, showHidden: true }),
      inspect({ nested: { credentials } }, { depth: Infinity }),
      JSON.stringify({ credentials }),
    ];
    for (const text of shown) {
      expect(text).not.toContain(SECRET);
      expect(text).toContain('redacted');
    }
  });

  it('refuses malformed entries and unknown acls, naming the entry but never its value', () => {
    const refuse = (options: Parameters<typeof ZkCredentials.from>[0], message: RegExp) => {
      expect(() => ZkCredentials.from(options)).toThrow(InvalidLockOptionsError);
      expect(() => ZkCredentials.from(options)).toThrow(message);
      try {
        ZkCredentials.from(options);
      } catch (err) {
        expect((err as Error).message).not.toContain(SECRET);
      }
    };
    refuse({ auth: ['a:b', SECRET] }, /auth entry 2 of 2 is not digest credentials/);
    refuse({ auth: `:${SECRET}` }, /non-empty user/);
    refuse({ auth: [42 as unknown as string] }, /auth entry 1 of 1/);
    refuse({ acl: SECRET as 'open' }, /acl must be 'open' or 'creator'/);
    refuse({ acl: 'creator' }, /needs an identity/);
    refuse({ tls: { key: SECRET } }, /tls options cannot be loaded/);
  });

  it('withoutSecrets keeps every option but auth and tls', () => {
    const options = { connectionString: 'zk:2181', auth: SECRET, tls: true, namespace: '/a' };
    expect(withoutSecrets(options)).toEqual({ connectionString: 'zk:2181', namespace: '/a' });
  });

  it('accepts only the ids the server stored for us, compared exactly, whatever their scheme', () => {
    const credentials = ZkCredentials.from({ auth: `orders:${SECRET}`, acl: 'creator' });
    const entry = (scheme: string, id: string) => ({ permission: 31, id: { scheme, id } });
    const digest = entry(
      'digest',
      `orders:${createHash('sha1').update(`orders:${SECRET}`).digest('base64')}`,
    );
    // Until learned: the digest id it computes as the server does, never a certificate's.
    expect(credentials.foreignEntries([digest])).toEqual([]);
    expect(credentials.foreignEntries([entry('x509', 'CN=client')])).toHaveLength(1);
    credentials.learnOwnIds([entry('x509', 'CN=client'), digest]);
    expect(credentials.foreignEntries([digest, entry('x509', 'CN=client')])).toEqual([]);
    const other = entry('x509', 'CN=other-client');
    expect(credentials.foreignEntries([digest, other])).toEqual([other]);
    expect(() => credentials.checkAcl('/ns/a', [other])).toThrow(
      /x509:CN=other-client \(all\)\) grants identities other than this client's \(x509:CN=client \(all\), digest:orders \(all\)\)/,
    );
    expect(() => credentials.checkAcl('/ns/a', [other])).not.toThrow(new RegExp(SECRET));
  });
});
