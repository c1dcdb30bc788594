/**
 * `node bench/thread-listeners.ts [--threads N] [--work-us U] [--seconds S] [--rounds R]`: two ways for N
 * threads to serve HTTP (issue 17, "one listener per thread with reusePort, or one acceptor that
 * hands requests over — measure both"), on bare `node:http` servers doing U µs of work per
 * request (the engine's share of a PK lookup is tens of µs):
 *
 * - `reusePort`: every thread listens on the port (`reusePort: true`); the kernel spreads
 *   connections. What the instance does (`packages/instance/src/threads/query-threads.ts`).
 * - `acceptor`: the main thread alone speaks HTTP and hands each request to a worker over a
 *   MessagePort, writing the answer it gets back. Node cannot pass a socket to a worker thread,
 *   so handing over means this: the acceptor parses and writes every request itself.
 *
 * Against one thread doing both. The load generator (autocannon, 16 connections) runs in this
 * process and shares the machine's cores with the servers: on 2 cores, 2 server threads and
 * the load generator compete, so compare the ratios, not the absolute figures. The three run
 * in turn R times and the medians are reported, so a burst of other load on a shared machine
 * does not decide the comparison.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { measureThroughput } from './lib/http-load.ts';
import { printTable } from './lib/report.ts';

const BODY = JSON.stringify({ data: [{ id: 1, qty: 2, amount: '3.50' }], meta: { rows: 1 } });

function work(us: number): string {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
  return BODY;
}

function answer(response: ServerResponse, body: string): void {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  response.end(body);
}

interface ThreadData {
  readonly mode: 'reusePort' | 'acceptor';
  readonly port: number;
  readonly workUs: number;
}

if (!isMainThread && parentPort) {
  const data = workerData as ThreadData;
  const port = parentPort;
  if (data.mode === 'reusePort') {
    createServer((_request, response) => answer(response, work(data.workUs))).listen(
      { port: data.port, host: '127.0.0.1', reusePort: true },
      () => port.postMessage('listening'),
    );
  } else {
    port.on('message', (id: number) => port.postMessage([id, work(data.workUs)]));
    port.postMessage('listening');
  }
} else {
  const { values: args } = parseArgs({
    options: {
      threads: { type: 'string', default: '2' },
      'work-us': { type: 'string', default: '40' },
      seconds: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const threads = Number(args.threads);
  const workUs = Number(args['work-us']);
  const seconds = Number(args.seconds);

  const listen = (
    handler: (request: IncomingMessage, response: ServerResponse) => void,
    reusePort: boolean,
  ) =>
    new Promise<{ port: number; close(): void }>((resolve) => {
      const server = createServer(handler);
      server.listen({ port: 0, host: '127.0.0.1', reusePort }, () =>
        resolve({
          port: (server.address() as AddressInfo).port,
          close: () => server.close(),
        }),
      );
    });
  const startWorkers = async (mode: ThreadData['mode'], port: number, count: number) => {
    const workers = Array.from(
      { length: count },
      () => new Worker(new URL(import.meta.url), { workerData: { mode, port, workUs } }),
    );
    await Promise.all(
      workers.map((worker) => new Promise((resolve) => worker.once('message', resolve))),
    );
    return workers;
  };
  const measure = async (port: number) =>
    (
      await measureThroughput({
        url: `http://127.0.0.1:${port}`,
        paths: ['/query?q=x'],
        connections: 16,
        durationSeconds: seconds,
      })
    ).requestsPerSecond;

  const round = async () => {
    // 1. One thread.
    const single = await listen((_request, response) => answer(response, work(workUs)), false);
    const one = await measure(single.port);
    single.close();

    // 2. Every thread listens (reusePort).
    const main = await listen((_request, response) => answer(response, work(workUs)), true);
    const listeners = await startWorkers('reusePort', main.port, threads - 1);
    const reusePort = await measure(main.port);
    main.close();
    await Promise.all(listeners.map((worker) => worker.terminate()));

    // 3. One acceptor hands each request to a worker, round robin.
    const handlers = await startWorkers('acceptor', 0, threads - 1);
    const waiting = new Map<number, ServerResponse>();
    let nextId = 0;
    for (const worker of handlers) {
      worker.on('message', ([id, body]: [number, string]) => {
        const response = waiting.get(id);
        waiting.delete(id);
        if (response) answer(response, body);
      });
    }
    const acceptorServer = await listen((_request, response) => {
      const id = nextId++;
      waiting.set(id, response);
      handlers[id % handlers.length]?.postMessage(id);
    }, false);
    const acceptor = await measure(acceptorServer.port);
    acceptorServer.close();
    await Promise.all(handlers.map((worker) => worker.terminate()));
    return { one, reusePort, acceptor };
  };
  const runs = [];
  for (let r = 0; r < Number(args.rounds); r++) runs.push(await round());
  const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1] ?? 0;
  const one = median(runs.map((run) => run.one));
  const reusePort = median(runs.map((run) => run.reusePort));
  const acceptor = median(runs.map((run) => run.acceptor));

  printTable(
    `HTTP with ${threads} threads, ${workUs} µs of work per request (median req/s of ${runs.length} rounds)`,
    [
      { server: '1 thread', 'req/s': Math.round(one), 'ratio to 1 thread': '1.00' },
      {
        server: `${threads} threads, each listening (reusePort)`,
        'req/s': Math.round(reusePort),
        'ratio to 1 thread': (reusePort / one).toFixed(2),
      },
      {
        server: `1 acceptor + ${threads - 1} worker(s)`,
        'req/s': Math.round(acceptor),
        'ratio to 1 thread': (acceptor / one).toFixed(2),
      },
    ],
  );
}
