import { request } from 'node:http';
import { compileSchema, exportGeneration, parseSchemaConfig } from '@replix/engine';
import { loadSnapshot } from '@replix/instance';
import { connectorFromUrl } from '@replix/sources';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveProcess } from './serve-process.ts';

/** One request on a connection of its own, so the kernel may hand it to any thread. */
function fresh(url: string, path: string, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      new URL(path, url),
      { agent: false, headers: { authorization: `Bearer ${key}`, connection: 'close' } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    sent.on('error', reject);
    sent.end();
  });
}

const query = (text: string) => `/query?q=${encodeURIComponent(text)}`;

describe('replix serve --threads', () => {
  let sourceUrl: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(
      'CREATE TABLE t (id INT PRIMARY KEY, label VARCHAR(420), n INT)',
    );
    // Rows enough that the snapshot (about 250 MB) clearly outweighs a thread's own heap and code
    // (40-140 MB on a busy machine, by when V8 last collected): a copy would add all of it.
    await db.exec(
      "INSERT INTO t SELECT seq, CONCAT(REPEAT('x', 400), seq), seq % 97 FROM seq_1_to_600000",
    );
    sourceUrl = db.url;
    drop = () => db.drop();
  }, 120_000);

  afterAll(() => drop?.());

  it('answers on every thread, and stops on SIGTERM', async () => {
    const server = await serveProcess(['--source', sourceUrl, '--threads', '2'], {
      ...process.env,
      REPLIX_LOG_LEVEL: 'warn',
    });
    try {
      const answers = await Promise.all(
        Array.from({ length: 30 }, () =>
          fresh(server.ready.url, query('t (id = 5) { n }'), server.ready.apiKey ?? ''),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(30).fill(200));
      const metrics = await fresh(server.ready.url, '/metrics', server.ready.adminKey ?? '');
      expect(metrics.body).toMatch(/^replix_thread_queries_total\{thread="1"\} [1-9]/m);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120_000);

  /** True once the engine exports generations over shared memory rather than copies. */
  async function generationsShareMemory(): Promise<boolean> {
    const connector = connectorFromUrl(sourceUrl);
    try {
      const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
      const { generation } = await loadSnapshot(connector, schema, 1, () => {});
      const column = exportGeneration(generation).tables[0]?.chunks[0]?.columns[0] as
        | { values?: ArrayBufferView; bytes?: ArrayBufferView }
        | undefined;
      const view = column?.values ?? column?.bytes;
      return view?.buffer instanceof SharedArrayBuffer;
    } finally {
      await connector.close();
    }
  }

  it('holds one copy of the snapshot: a second thread adds less than the snapshot again', async (context) => {
    if (!(await generationsShareMemory())) {
      // Until the engine shares generations, each thread holds a copy: nothing to measure yet.
      context.skip();
    }
    const resident = async (threads: number) => {
      const server = await serveProcess(['--source', sourceUrl, '--threads', String(threads)], {
        ...process.env,
        REPLIX_LOG_LEVEL: 'warn',
      });
      try {
        for (let i = 0; i < 20; i++) {
          await fresh(
            server.ready.url,
            query('t (n = 3) { id label } LIMIT 50'),
            server.ready.apiKey ?? '',
          );
        }
        // The load's garbage leaves the resident set when V8's memory reducer runs, some
        // seconds after the process goes idle, at a moment that varies by tens of MB from run to
        // run: the lowest of the samples over 10 s idle is what the process holds.
        let resident = server.residentBytes();
        for (let i = 0; i < 10; i++) {
          await new Promise((resolve) => setTimeout(resolve, 1000));
          resident = Math.min(resident, server.residentBytes());
        }
        const detail = await fresh(server.ready.url, '/health/detail', server.ready.adminKey ?? '');
        return {
          resident,
          snapshot: JSON.parse(detail.body).snapshot.bytes as number,
        };
      } finally {
        await server.stop();
      }
    };
    const one = await resident(1);
    const two = await resident(2);
    // A copy per thread would add the snapshot's bytes and the thread's own heap and code;
    // sharing adds only the latter (the server's modules, its own V8 heap).
    expect(two.resident - one.resident).toBeLessThan(one.snapshot);
  }, 180_000);
});
