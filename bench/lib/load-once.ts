/**
 * One measurement of bench/load.ts in a process of its own, so each starts as cold as an
 * instance's first load (no JIT warmed by the previous one): either the bare driver streaming the
 * tables to nowhere (mysql2, or pg for a PostgreSQL URL), or a snapshot load on `threads` threads. Prints `{"ms": …, "cpuMs": …}`: the wall
 * time, and the process's CPU time (user + system, every thread), which other work on a shared
 * machine disturbs less. Module loading is not counted.
 *
 *   node bench/lib/load-once.ts <url> stream|load [threads]
 */
import { compileSchema, parseSchemaConfig } from '@replix/engine';
import { loadSnapshot } from '@replix/instance';
import { connectorFromUrl } from '@replix/sources';
import { timeMysqlStream } from './mysql-stream-baseline.ts';
import { timePgStream } from './pg-stream-baseline.ts';

const [url, mode, threads] = process.argv.slice(2);
if (!url || (mode !== 'stream' && mode !== 'load'))
  throw new Error('usage: <url> stream|load [threads]');
const cpuAtStart = process.cpuUsage();
const cpuMs = () => {
  const { user, system } = process.cpuUsage(cpuAtStart);
  return (user + system) / 1000;
};
if (mode === 'stream') {
  const stream = url.startsWith('postgres') ? timePgStream : timeMysqlStream;
  const { ms } = await stream(url, ['dim', 'fact']);
  process.stdout.write(`${JSON.stringify({ ms, cpuMs: cpuMs() })}\n`);
} else {
  const connector = connectorFromUrl(url);
  const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
  const cpuBefore = cpuMs();
  const started = performance.now();
  await loadSnapshot(connector, schema, 1, () => {}, { threads: Number(threads ?? 1) });
  const ms = performance.now() - started;
  const cpu = cpuMs() - cpuBefore;
  await connector.close();
  process.stdout.write(`${JSON.stringify({ ms, cpuMs: cpu })}\n`);
}
