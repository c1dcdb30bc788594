/**
 * Runs the hostile clients of `bench/hostile.ts` on a thread of their own, so reading and
 * parsing their big answers never delays the measuring thread's own timers and sockets: the
 * cheap query's latency is the instance's, not the load generator's.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HOSTILE_SHAPES } from '../../packages/instance/test/hostile-shapes.ts';

interface Job {
  readonly url: string;
  readonly apiKey: string;
  readonly clients: number;
}

const { url, apiKey, clients } = workerData as Job;
const outcomes = new Map<string, number>();
let stopping = false;

async function send(text: string): Promise<string> {
  try {
    const response = await fetch(`${url}/query`, {
      method: 'POST',
      body: text,
      headers: { authorization: `Bearer ${apiKey}` },
    });
    if (response.status === 200) {
      // Drain without decoding: the bytes still cross the socket.
      for await (const _chunk of response.body ?? []) {
      }
      return '200';
    }
    const body = (await response.json().catch(() => undefined)) as
      | { error?: { code?: string } }
      | undefined;
    return `${response.status} ${body?.error?.code ?? ''}`.trim();
  } catch {
    return 'no answer';
  }
}

async function client(offset: number): Promise<void> {
  for (let i = offset; !stopping; i++) {
    const shape = HOSTILE_SHAPES[i % HOSTILE_SHAPES.length]!;
    const key = await send(shape.text);
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
}

const running = Array.from({ length: clients }, (_, i) => client(i * 3));
parentPort?.once('message', async () => {
  stopping = true;
  await Promise.all(running);
  parentPort?.postMessage([...outcomes]);
});
