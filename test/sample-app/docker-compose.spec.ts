/**
 * No Docker engine here: this checks docker-compose.yml against the app's own configuration
 * instead (service names, ports, environment), so the file cannot drift from the code.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../sample-app/src/config/app-config';

const ROOT = join(__dirname, '..', '..');
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
const services: Record<string, any> = compose.services;
const zkNames = ['zk1', 'zk2', 'zk3'];
const appNames = ['app1', 'app2', 'app3'];

/** The environment variables loadConfig actually reads. */
function variablesReadByApp(): Set<string> {
  const read = new Set<string>();
  loadConfig(new Proxy({}, { get: (_t, key) => (read.add(String(key)), undefined) }));
  return read;
}

describe('docs/zookeeper-ensemble.compose.yml (docs/getting-started.md)', () => {
  const ensemble = parse(
    readFileSync(join(ROOT, 'docs', 'zookeeper-ensemble.compose.yml'), 'utf8'),
    { merge: true },
  );

  it("is the sample stack's 3-node ensemble, each member's client port on the host", () => {
    zkNames.forEach((name, i) => {
      const { ports, ...member } = ensemble.services[name];
      expect(member).toEqual(services[name]);
      expect(ports).toEqual([`${2181 + i}:2181`]);
    });
    expect(Object.keys(ensemble.services)).toEqual(zkNames);
  });
});

describe('docker-compose.yml', () => {
  it('has a 3-node ZooKeeper ensemble of the official image, each with a health check', () => {
    const servers = zkNames.map((name, i) => `server.${i + 1}=${name}:2888:3888;2181`).join(' ');
    zkNames.forEach((name, i) => {
      const zk = services[name];
      expect(zk.image).toMatch(/^zookeeper:3\.8/);
      expect(zk.hostname).toBe(name);
      expect(zk.environment).toMatchObject({ ZOO_MY_ID: String(i + 1), ZOO_SERVERS: servers });
      expect(zk.healthcheck.test).toEqual(expect.arrayContaining(['zkServer.sh', 'status']));
      expect(zk.environment.ZOO_4LW_COMMANDS_WHITELIST.split(',')).toContain('srvr');
    });
  });

  it('has PostgreSQL with a health check', () => {
    expect(services.postgres.image).toMatch(/^postgres:\d+/);
    expect(services.postgres.healthcheck.test.join(' ')).toContain('pg_isready');
  });

  it('runs three app replicas built from sample-app/Dockerfile on host ports 3001-3003', () => {
    appNames.forEach((name, i) => {
      const app = services[name];
      expect(app.build).toEqual({ context: '.', dockerfile: 'sample-app/Dockerfile' });
      expect(app.ports).toEqual([`${3001 + i}:${app.environment.PORT}`]);
      for (const dependency of [...zkNames, 'postgres']) {
        expect(app.depends_on[dependency]).toEqual({ condition: 'service_healthy' });
      }
    });
    expect(existsSync(join(ROOT, 'sample-app', 'Dockerfile'))).toBe(true);
  });

  it('gives the apps only variables the app reads, and values it accepts', () => {
    const known = variablesReadByApp();
    for (const name of appNames) {
      const env: Record<string, string> = services[name].environment;
      expect(Object.keys(env).filter((key) => !known.has(key))).toEqual([]);
      expect(() => loadConfig(env)).not.toThrow();
    }
  });

  it('points every app at the ensemble, the postgres service and its credentials', () => {
    const pg = services.postgres.environment;
    const instances = new Set<string>();
    for (const name of appNames) {
      const config = loadConfig(services[name].environment);
      expect(config.zkConnect.split(',').sort()).toEqual(zkNames.map((zk) => `${zk}:2181`));
      expect(config.database.kind).toBe('postgres');
      const url = new URL((config.database as { url: string }).url);
      expect(url.hostname).toBe('postgres');
      expect(url.port).toBe('5432');
      expect([url.username, url.password, url.pathname.slice(1)]).toEqual([
        pg.POSTGRES_USER,
        pg.POSTGRES_PASSWORD,
        pg.POSTGRES_DB,
      ]);
      instances.add(config.instanceName);
    }
    expect(instances.size).toBe(3);
  });

  it('matches the Dockerfile: the exposed port, and the app entry point', () => {
    const dockerfile = readFileSync(join(ROOT, 'sample-app', 'Dockerfile'), 'utf8');
    const exposed = /^EXPOSE (\d+)$/m.exec(dockerfile)?.[1];
    for (const name of appNames) expect(services[name].environment.PORT).toBe(exposed);
    expect(dockerfile).toMatch(/^CMD .*sample-app\/src\/main\.ts/m);
    expect(dockerfile).toMatch(/^COPY lib \.\/lib$/m);
  });
});
