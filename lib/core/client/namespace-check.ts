// With acl 'creator': this client's identities as the server stores them, and its namespace's ACL.
import { CreateMode } from '../zookeeper/zk-client';
import type { ZkSession } from '../zookeeper/zk-session';
import { ZkCredentials } from '../zookeeper/zk-credentials';
import { LockAccessDeniedError } from '../errors';
import { ensureNamespace } from '../engine/contender';
import type { AclEntry } from '../zookeeper/zk-client';

/** The name of the node connect() creates to learn our ids: ephemeral, deleted at once. */
const PROBE = '_zklock-identity-';

/**
 * @internal
 * With `acl: 'creator'`, at connect: creates the namespace if missing, then an ephemeral probe
 * with CREATOR_ALL_ACL whose stored ACL names our identities (ZkCredentials.learnOwnIds); warns
 * once if the namespace's ACL grants others or refuses us (docs/guides/security.md, "Preparing a
 * namespace"). No namespace: the probe is at the root.
 */
export async function checkNamespace(
  session: ZkSession,
  credentials: ZkCredentials,
  namespace: string | undefined,
  warn: (message: string) => void,
): Promise<void> {
  if (!credentials.checksAcl) return;
  const shown = `"${namespace ?? '/'}"`;
  let foreign: AclEntry[];
  try {
    if (namespace) await ensureNamespace(session, namespace);
    const name = await session.create(
      `${namespace ?? ''}/${PROBE}`,
      null,
      CreateMode.EPHEMERAL_SEQUENTIAL,
    );
    const probe = `${namespace ?? ''}/${name.slice(name.lastIndexOf('/') + 1)}`;
    const stored = await session.getAcl(probe);
    await session.remove(probe).catch(() => undefined); // else it goes with the session
    credentials.learnOwnIds(stored);
    if (!namespace) return;
    foreign = credentials.foreignEntries(await session.getAcl(namespace));
  } catch (err) {
    if (!(err instanceof LockAccessDeniedError)) throw err;
    warn(
      `acl 'creator': the namespace ${shown} refuses this client's identity ` +
        `(ZooKeeper refused to ${err.operation} "${err.path}"), so its locks fail with ` +
        'LockAccessDeniedError. Grant this identity all permissions on the namespace, or use ' +
        'another namespace (docs/guides/security.md, "Preparing a namespace")',
    );
    return;
  }
  if (foreign.length === 0) return;
  warn(
    `acl 'creator': the namespace ${shown} grants identities other than this client's ` +
      `(${ZkCredentials.describeAcl(foreign).join(', ')}): they can create lock paths in it, ` +
      'which this client then refuses (UnexpectedAclError). Set its ACL to this identity only ' +
      `(zkCli: setAcl ${namespace} <this identity's ACL>; docs/guides/security.md, "Preparing a namespace")`,
  );
}
