import { ZkLockClient } from '../lib/core';
async function main() {
  const locks = await ZkLockClient.connect({ connectionString: process.env.ZK_CONNECT!, namespace: '/zzprof/locks', sessionTimeoutMs: 10_000 });
  const n = Number(process.argv[2] ?? 20000);
  for (let i = 0; i < 5000; i++) { const l = await locks.acquire('/p'); await new Promise<void>((r) => setImmediate(r)); await l.release(); }
  const cpu = process.cpuUsage(); const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) { const l = await locks.acquire('/p'); await new Promise<void>((r) => setImmediate(r)); await l.release(); }
  const c = process.cpuUsage(cpu);
  console.log(`lock: ${((c.user + c.system) / n).toFixed(1)} us cpu/op, ${(Number(process.hrtime.bigint() - t) / 1e3 / n).toFixed(1)} us/op`);
  await locks.close();
}
main();
