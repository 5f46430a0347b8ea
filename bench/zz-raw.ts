import { randomUUID } from 'node:crypto';
import { cycle } from './raw-baselines.scenario';
import { RawZkClient } from './raw-zk.client';
async function main() {
  const raw = await RawZkClient.connect(process.env.ZK_CONNECT!);
  await raw.mkdirp('/zzraw/p');
  const prefix = `_c_${randomUUID()}-lock-`;
  const n = Number(process.argv[2] ?? 20000);
  const tick = () => new Promise<void>((r) => setImmediate(r));
  for (let i = 0; i < 5000; i++) await cycle(raw, '/zzraw/p', prefix, tick);
  const cpu = process.cpuUsage(); const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await cycle(raw, '/zzraw/p', prefix, tick);
  const c = process.cpuUsage(cpu);
  console.log(`raw: ${((c.user + c.system) / n).toFixed(1)} us cpu/op, ${(Number(process.hrtime.bigint() - t) / 1e3 / n).toFixed(1)} us/op`);
  process.exit(0);
}
main();
