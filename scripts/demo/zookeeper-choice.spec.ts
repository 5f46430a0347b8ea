import { chooseZooKeeper, embeddedNotice, type ZooKeeperProbes } from './zookeeper-choice';

const installed: ZooKeeperProbes = {
  classpath: () => '/usr/share/java/zookeeper.jar',
  hasJava: () => true,
};
const missing =
  'ZooKeeper not found. Install it (Debian/Ubuntu: `sudo apt-get install zookeeper`).';
const notInstallable: ZooKeeperProbes = {
  classpath: () => {
    throw new Error(missing);
  },
  hasJava: () => false,
};

describe("the demo's ZooKeeper", () => {
  it('is the one ZK_CONNECT names, whatever is installed', () => {
    expect(chooseZooKeeper({ zkConnect: 'zk1:2181' }, notInstallable)).toEqual({
      kind: 'given',
      connectionString: 'zk1:2181',
    });
  });

  it('is the installed server where ZooKeeper and Java are there', () => {
    expect(chooseZooKeeper({}, installed)).toEqual({ kind: 'installed' });
  });

  it('is the embedded server, with the reason, where ZooKeeper cannot be installed', () => {
    expect(chooseZooKeeper({}, notInstallable)).toEqual({
      kind: 'embedded',
      reason: `no real ZooKeeper here, and none can be installed: ${missing}`,
    });
  });

  it('is the embedded server where ZooKeeper is installed but Java is not', () => {
    const noJava = { ...installed, hasJava: () => false };
    expect(chooseZooKeeper({}, noJava)).toEqual({
      kind: 'embedded',
      reason: 'ZooKeeper is installed but no `java` runs here.',
    });
  });

  it('is the embedded server when asked for', () => {
    expect(chooseZooKeeper({ embedded: true }, installed).kind).toBe('embedded');
  });

  it('says, when embedded, that it is not ZooKeeper and not for production, and why', () => {
    const notice = embeddedNotice(missing);
    expect(notice).toContain(missing);
    expect(notice).toContain('embedded in-memory server');
    expect(notice).toContain('NOT FOR PRODUCTION');
    expect(notice).toContain('ZK_CONNECT=host:port');
  });
});
