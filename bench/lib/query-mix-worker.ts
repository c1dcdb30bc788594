/**
 * The query clients of `bench/checkpoint.ts`, on a thread of their own: the instance under test
 * serves on the main thread (`threads: 1`) and writes its checkpoints there too, so the clients
 * must not queue behind that same thread, or their own stalls would be counted as the
 * instance's. Still one process, as the bench asks.
 *
 * `clients` keep-alive connections each send one query, wait for its answer and send the next
 * (closed loop), alternating a point lookup by id and a small filtered, ordered query. Each
 * `{ ms }` message runs them for that long and answers with every 2xx response time (ms) and
 * the count of anything else; `'stop'` closes the connections and ends the thread.
 */
import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { mulberry32 } from '@replix/testkit/mulberry32';

export interface QueryMixJob {
  readonly url: string;
  readonly apiKey: string;
  readonly clients: number;
  /** Ids run from 1 to `rows`. */
  readonly rows: number;
  readonly table: string;
}

export interface QueryMixWindow {
  /** Response times of 2xx answers, ms, in order of arrival. */
  readonly latencies: Float64Array;
  /** Which query each latency is of: 0 the point lookup, 1 the filtered, ordered one. */
  readonly kinds: Uint8Array;
  /** Answers other than 2xx, and requests that failed outright. */
  readonly failures: number;
  readonly firstFailure: string | null;
}

const job = workerData as QueryMixJob;
const target = new URL('/query', job.url);
const agent = new Agent({ keepAlive: true, maxSockets: job.clients });
const random = mulberry32(0x5eed);

/** The two queries of the mix, by kind, for the id drawn. */
function queryText(kind: number, id: number): string {
  if (kind === 0) return `${job.table} (id = ${id}) { * }`;
  // Twenty ids found through the key index, filtered and sorted: at most 5 rows. (A range of
  // ids would scan a whole 65,536-row chunk, 1 to 2 ms of engine time a query.)
  const ids = Array.from({ length: 20 }, (_, i) => id + i * 19).join(', ');
  return `${job.table} (id IN (${ids}) AND shipped = true) { id customer_id amount created_at } ORDER BY amount DESC LIMIT 5`;
}

function send(text: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${job.apiKey}`,
          'content-type': 'text/plain',
          'content-length': Buffer.byteLength(text),
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        response.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function runWindow(ms: number): Promise<QueryMixWindow> {
  const latencies: number[] = [];
  const kinds: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  const until = performance.now() + ms;
  const client = async (offset: number) => {
    for (let i = offset; performance.now() < until; i++) {
      const kind = i % 2;
      const id = 1 + Math.floor(random() * Math.max(1, job.rows - 400));
      const started = performance.now();
      try {
        const { status, body } = await send(queryText(kind, id));
        const took = performance.now() - started;
        if (status >= 200 && status < 300) {
          latencies.push(took);
          kinds.push(kind);
        } else {
          failures += 1;
          firstFailure ??= `${status} ${body.slice(0, 200)}`;
        }
      } catch (error) {
        failures += 1;
        firstFailure ??= String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: job.clients }, (_, i) => client(i)));
  return {
    latencies: Float64Array.from(latencies),
    kinds: Uint8Array.from(kinds),
    failures,
    firstFailure,
  };
}

parentPort?.on('message', async (message: { ms: number } | 'stop') => {
  if (message === 'stop') {
    agent.destroy();
    parentPort?.close();
    return;
  }
  parentPort?.postMessage(await runWindow(message.ms));
});
