// The connection string: its parts, the rule each must follow, and how logs show it.

/** One server of the connection string. */
export interface ZkServerAddress {
  host: string;
  port: number;
}

/** A connection string the ZooKeeper client can use: its servers, in order, and its chroot. */
export interface ParsedConnectionString {
  servers: ZkServerAddress[];
  chroot?: string;
}

/** ZooKeeper's client port, taken for a server given without one (as ZooKeeper's own clients). */
const DEFAULT_PORT = 2181;
/** A host name or an IPv4 address (each server splits at ':' into host and port, so no IPv6). */
const HOST = /^[A-Za-z0-9._-]+$/;
/** The longest part of the string an error message shows (the rest is counted, not shown). */
const SHOWN_CHARS = 100;

/**
 * Parses `"host:port[,host:port...][/chroot]"` and checks every part, so a bad string fails now,
 * not in `net.connect` (which throws outside any promise). The reason names the bad part by its
 * place (`server 2`), never the whole string, text before an `@` or a non-numeric port.
 */
export function parseConnectionString(
  value: string,
): { ok: true; parsed: ParsedConnectionString } | { ok: false; reason: string } {
  const fail = (reason: string) => ({ ok: false as const, reason });
  const slash = value.indexOf('/');
  const hosts = slash === -1 ? value : value.slice(0, slash);
  const chroot = slash === -1 || slash === value.length - 1 ? undefined : value.slice(slash);
  const servers: ZkServerAddress[] = [];
  const entries = hosts.split(',');
  for (const [index, entry] of entries.entries()) {
    const server = `server ${index + 1}`;
    if (entry.includes('@')) {
      return fail(
        `${server} carries user information ("user:password@"), which ZooKeeper does not ` +
          'take in a connection string',
      );
    }
    if (entry === '') {
      return fail(
        entries.length === 1 ? 'no server is given' : `${server} is empty (a stray comma)`,
      );
    }
    const [host, port, ...more] = entry.split(':');
    if (more.length > 0 || !HOST.test(host)) {
      return fail(
        `${server} (${shown(entry)}) is not host:port with a host name or an IPv4 address ` +
          '(IPv6 addresses are not supported: give a host name)',
      );
    }
    if (port === undefined) {
      servers.push({ host, port: DEFAULT_PORT });
      continue;
    }
    if (!/^\d+$/.test(port)) return fail(`the port of ${server} (${shown(host)}) is not a number`);
    const number = Number(port);
    if (number < 1 || number > 65_535) {
      return fail(`the port of ${server} (${shown(host)}) is ${port}, not 1 to 65535`);
    }
    servers.push({ host, port: number });
  }
  if (chroot !== undefined) {
    const segments = chroot.slice(1).split('/');
    if (segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\u0000'))) {
      return fail(
        `the chroot path ${shown(chroot)} is not a ZooKeeper path (no empty, "." or ".." ` +
          'segments, no trailing "/")',
      );
    }
  }
  return { ok: true, parsed: { servers, chroot } };
}

/** A part of the string as a message shows it: quoted, cut after SHOWN_CHARS characters. */
function shown(part: string): string {
  return JSON.stringify(
    part.length <= SHOWN_CHARS ? part : `${part.slice(0, SHOWN_CHARS)}...(${part.length} chars)`,
  );
}

/** A connection string as logs and errors show it: any `user:password@` of a server cut. */
export function withoutUserInfo(connectionString: string): string {
  return connectionString.replace(/[^,@/]*@/g, '');
}
