/** Owns the secrets of a connection: `auth`, `acl` and `tls`, kept out of every log. */
import { createHash } from 'node:crypto';
import { createSecureContext, type ConnectionOptions, type SecureContext } from 'node:tls';
import { inspect } from 'node:util';
import { ACL, type AclEntry } from './zk-client';
import { InvalidLockOptionsError, UnexpectedAclError } from '../errors';
import type { ZkTlsOptions } from '../types';
import { MAX_REQUEST_BYTES, encodeAuth } from './jute';

/** The security options of ZkLockClientOptions (see there). */
export interface ZkSecurityOptions {
  auth?: string | readonly string[];
  acl?: 'open' | 'creator';
  tls?: boolean | ZkTlsOptions;
}

const SUBJECT = 'ZkLockClient.connect';

/**
 * Everything secret a client needs, where logs cannot reach it: private fields (`#`) that
 * util.inspect and JSON.stringify never show, printed redacted; the TLS key loaded once into a
 * SecureContext, so sockets' options never carry the PEM text.
 */
export class ZkCredentials {
  static readonly none = new ZkCredentials([], 'open');

  readonly #auth: readonly Buffer[];
  readonly #secureContext?: SecureContext;
  readonly #tls?: ZkTlsOptions;
  /** Our ids as the server stores them (`scheme:id`), once learned (learnOwnIds). */
  #ownIds?: ReadonlySet<string>;

  private constructor(
    auth: readonly Buffer[],
    /** The ACL of every node this client creates. */
    readonly acl: 'open' | 'creator',
    tls?: ZkTlsOptions,
    secureContext?: SecureContext,
  ) {
    this.#auth = auth;
    this.#tls = tls;
    this.#secureContext = secureContext;
  }

  /** Validates the options; InvalidLockOptionsError names the entry, never its value. */
  static from(options: ZkSecurityOptions): ZkCredentials {
    const entries = options.auth === undefined ? [] : [options.auth].flat();
    const auth = entries.map((entry, i) => {
      if (typeof entry !== 'string' || entry.indexOf(':') < 1) {
        throw new InvalidLockOptionsError(
          SUBJECT,
          `auth entry ${i + 1} of ${entries.length} is not digest credentials "user:password" ` +
            '(its value is not shown)',
          'Give each `auth` entry as "user:password", with a non-empty user',
        );
      }
      const auth = Buffer.from(entry, 'utf8');
      // Sent on every connection: one longer than a server reads would drop each of them.
      const bytes = authPacket(auth).length - 4;
      if (bytes > MAX_REQUEST_BYTES) {
        throw new InvalidLockOptionsError(
          SUBJECT,
          `auth entry ${i + 1} of ${entries.length} makes an AUTH request of ${bytes} bytes, ` +
            `over the limit of ${MAX_REQUEST_BYTES} bytes (the servers' default ` +
            'jute.maxbuffer: a server drops the connection on a longer request)',
          'Give each `auth` entry as a short "user:password"',
        );
      }
      return auth;
    });
    const acl = options.acl ?? 'open';
    if (acl !== 'open' && acl !== 'creator') {
      throw new InvalidLockOptionsError(
        SUBJECT,
        // Not echoed: a secret put in the wrong option must not reach a log either.
        "acl must be 'open' or 'creator' (the value given is not shown)",
        "Use 'creator' so that only this client's identity may change or delete its nodes",
      );
    }
    const tls = options.tls === true ? {} : options.tls || undefined;
    const hasCert = !!tls && (tls.cert !== undefined || tls.pfx !== undefined);
    if (acl === 'creator' && auth.length === 0 && !hasCert) {
      throw new InvalidLockOptionsError(
        SUBJECT,
        "acl 'creator' needs an identity, and neither `auth` nor a TLS client certificate is set",
        'Add `auth: "user:password"` (or a client certificate the servers authenticate)',
      );
    }
    return new ZkCredentials(auth, acl, tls, tls && loadSecureContext(tls));
  }

  get authCount(): number {
    return this.#auth.length;
  }

  get usesTls(): boolean {
    return this.#tls !== undefined;
  }

  /** The ACL of every node created (OPEN_ACL_UNSAFE or CREATOR_ALL_ACL). */
  get aclList(): readonly AclEntry[] {
    return this.acl === 'creator' ? ACL.CREATOR_ALL_ACL : ACL.OPEN_ACL_UNSAFE;
  }

  /** Whether the nodes a lock relies on must carry our ACL (`acl: 'creator'`; see checkAcl). */
  get checksAcl(): boolean {
    return this.acl === 'creator';
  }

  /**
   * Learns our identities from `stored`, the ACL the server gave a node created with
   * CREATOR_ALL_ACL: one id per identity it authenticated (digest ids, the certificate subject),
   * exactly as the server compares them.
   */
  learnOwnIds(stored: readonly AclEntry[]): void {
    this.#ownIds = new Set(stored.map(({ id }) => `${id.scheme}:${id.id}`));
  }

  /**
   * The entries of `found` that grant an identity not ours: not learned (learnOwnIds) or, before
   * that, not a digest id of `auth` (computed as the server does; a certificate's never assumed).
   */
  foreignEntries(found: readonly AclEntry[]): AclEntry[] {
    const ours =
      this.#ownIds ?? new Set(this.#auth.map((auth) => `digest:${digestId(auth.toString())}`));
    return found.filter(({ id }) => !ours.has(`${id.scheme}:${id.id}`));
  }

  /** `acl` as zkCli prints it, digest ids by their user only (never the hash). */
  static describeAcl(acl: readonly AclEntry[]): string[] {
    return acl.map((a) => `${shownId(a.id.scheme, a.id.id)} (${permissionsOf(a.permission)})`);
  }

  /**
   * With `acl: 'creator'`: UnexpectedAclError when `found`, the ACL of a node the lock relies on,
   * grants an identity not ours (foreignEntries); no secret or hash in the error.
   */
  checkAcl(path: string, found: readonly AclEntry[]): void {
    if (!this.checksAcl || this.foreignEntries(found).length === 0) return;
    throw new UnexpectedAclError(
      path,
      ZkCredentials.describeAcl(found),
      this.expectedIds().map((id) => `${id} (all)`),
    );
  }

  /** Our identities as an error shows them. */
  private expectedIds(): string[] {
    if (this.#ownIds) {
      return [...this.#ownIds].map((id) => {
        const colon = id.indexOf(':');
        return shownId(id.slice(0, colon), id.slice(colon + 1));
      });
    }
    const expected = this.#auth.map((auth) => `digest:${auth.toString('utf8').split(':')[0]}`);
    if (this.#tls?.cert !== undefined || this.#tls?.pfx !== undefined) {
      expected.push('x509:<this client certificate>');
    }
    return expected;
  }

  /** The AUTH requests written right behind a ConnectRequest, before every queued request. */
  authPackets(): Buffer[] {
    return this.#auth.map(authPacket);
  }

  /** node:tls options to open a socket to `server`; the key is inside the SecureContext. */
  tlsOptions(server: { host: string; port: number }): ConnectionOptions {
    const { servername, rejectUnauthorized, checkServerIdentity } = this.#tls ?? {};
    // Only the keys that are set: node:tls asserts on `checkServerIdentity: undefined`.
    return {
      host: server.host,
      port: server.port,
      secureContext: this.#secureContext,
      ...(servername !== undefined && { servername }),
      ...(rejectUnauthorized !== undefined && { rejectUnauthorized }),
      ...(checkServerIdentity !== undefined && { checkServerIdentity }),
    };
  }

  toJSON(): Record<string, unknown> {
    return {
      auth: `${this.#auth.length} digest credential(s), redacted`,
      acl: this.acl,
      tls: this.#tls ? 'configured, redacted' : 'off',
    };
  }

  [inspect.custom](): string {
    return `ZkCredentials ${inspect(this.toJSON())}`;
  }
}

/** The client options as stored on the client: the same, without `auth` and `tls`. */
export function withoutSecrets<T extends ZkSecurityOptions>(options: T): Omit<T, 'auth' | 'tls'> {
  const { auth: _auth, tls: _tls, ...rest } = options;
  return rest;
}

function loadSecureContext(tls: ZkTlsOptions): SecureContext {
  try {
    return createSecureContext({
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      passphrase: tls.passphrase,
      pfx: tls.pfx,
      minVersion: tls.minVersion,
      maxVersion: tls.maxVersion,
      ciphers: tls.ciphers,
    });
  } catch (err) {
    // OpenSSL's message names the failing step (no PEM start line, bad decrypt), never the key.
    throw new InvalidLockOptionsError(
      SUBJECT,
      `the tls options cannot be loaded (${(err as Error).message})`,
      'Give tls.ca, tls.cert and tls.key as PEM text (read the files first, e.g. ' +
        'readFileSync(path, "utf8")), and tls.passphrase if the key is encrypted',
    );
  }
}

/** The AUTH request of one digest credential, as the Java client sends it. */
function authPacket(auth: Buffer): Buffer {
  return encodeAuth('digest', auth);
}

/** The id ZooKeeper's digest provider stores for credentials "user:password". */
function digestId(credentials: string): string {
  const user = credentials.slice(0, credentials.indexOf(':'));
  return `${user}:${createHash('sha1').update(credentials).digest('base64')}`;
}

/** An ACL id as errors and warnings show it: a digest id by its user only (never the hash). */
function shownId(scheme: string, id: string): string {
  return scheme === 'digest' ? `digest:${id.split(':')[0]}` : `${scheme}:${id}`;
}

/** ZooKeeper's permission bits as zkCli prints them (cdrwa), "all" for every one. */
function permissionsOf(bits: number): string {
  if ((bits & 31) === 31) return 'all';
  const letters = [
    [4, 'c'],
    [8, 'd'],
    [1, 'r'],
    [2, 'w'],
    [16, 'a'],
  ] as const;
  return letters.map(([bit, letter]) => (bits & bit ? letter : '')).join('') || 'none';
}
