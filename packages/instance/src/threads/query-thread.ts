import { Buffer } from 'node:buffer';
import type { MessagePort } from 'node:worker_threads';
import { compileSchema, importGeneration } from '@replix/engine';
import { serviceLogger } from '@replix/runtime/logger';
import { startTracing } from '@replix/runtime/tracing';
import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import { InstanceError, type InstanceErrorCode } from '../errors.ts';
import { ApiKeyVerifier } from '../http/api-keys.ts';
import { RateLimiter } from '../http/rate-limiter.ts';
import { buildInstanceServer } from '../http/server.ts';
import { PublicationBoard } from './publication-board.ts';
import { PublishedState } from './published-state.ts';
import type {
  FromQueryThread,
  QueryThreadAction,
  QueryThreadData,
  ToQueryThread,
} from './query-thread-messages.ts';
import type { HealthStatus } from './served-state.ts';

/** `getMetricsAsJSON()` of one thread's registry. */
export type ThreadMetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/**
 * A query thread: the same `buildInstanceServer` as the main thread, over a `PublishedState`
 * fed with the generations the main thread posts; listening on the instance's port beside the
 * others (`reusePort`: the kernel spreads connections over the threads). Actions (reload,
 * replication pause and resume, gathering `/metrics`) are asked of the main thread.
 */
export async function runQueryThread(data: QueryThreadData, port: MessagePort): Promise<void> {
  const log = serviceLogger('replix-instance', data.logLevel).child({ thread: data.thread });
  const tracing = data.tracing ? await startTracing(data.tracing) : undefined;
  const schema = compileSchema(data.source, data.schemaConfig);
  const board = new PublicationBoard(data.threads, data.board);
  let status: { health: HealthStatus; detail: Record<string, unknown> } = {
    health: 'loading',
    detail: { status: 'loading', boot_id: data.bootId },
  };
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  const send = (message: FromQueryThread) => port.postMessage(message);
  const ask = (action: QueryThreadAction, id = nextId++) =>
    new Promise<unknown>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      send({ type: 'action', id, action });
    });
  // A reload answers twice: once started (or refused), once swapped in (`id + 1`).
  const awaitReply = (id: number) =>
    new Promise<unknown>((resolve, reject) => waiting.set(id, { resolve, reject }));

  const state = new PublishedState(schema, data.bootId, board, data.thread, {
    health: () => status.health,
    detail: () => status.detail,
    async startReload() {
      const id = nextId;
      nextId += 2;
      const done = awaitReply(id + 1).then(() => {});
      done.catch(() => {});
      await ask('reload', id);
      return { done };
    },
  });
  const keys = new ApiKeyVerifier(Buffer.from(data.keySecret), data.keyIds, data.adminKeyIds);
  const rateLimiter = data.rateLimits
    ? new RateLimiter(data.rateLimits.policy, { shared: data.rateLimits })
    : undefined;
  let registry: Registry | undefined;
  const app = await buildInstanceServer({
    controller: state,
    keys,
    version: data.version,
    maxBodyBytes: data.maxBodyBytes,
    sync: {
      pause: () => ask('pause').then(() => {}),
      resume: () => ask('resume').then(() => {}),
    },
    log,
    httpLimits: data.httpLimits,
    rateLimiter,
    threadMetrics: {
      thread: data.thread,
      attach(local) {
        registry = local;
      },
      gather: () => ask('metrics') as Promise<string>,
    },
  });

  // Listen once this thread holds the generation being served (if any), so it never answers
  // 503 beside threads that serve.
  let listened = false;
  const listenWhenReady = async () => {
    if (listened || (board.served().generationId !== 0 && !state.current())) return;
    listened = true;
    await app.listen({ host: data.host, port: data.port, reusePort: true } as {
      host: string;
      port: number;
    });
    send({ type: 'listening' });
  };

  port.on('message', (message: ToQueryThread) => {
    switch (message.type) {
      case 'generation': {
        const generation = importGeneration(schema, message.shared);
        state.hold(generation, message.bytes);
        send({ type: 'held', id: generation.id });
        void listenWhenReady();
        break;
      }
      case 'status':
        status = { health: message.health, detail: message.detail };
        // An idle thread drops the generations the flip has passed here, not at its next query.
        state.current();
        break;
      case 'keys':
        // The slots first: a key this thread now accepts has one.
        if (message.rateLimitSlots) rateLimiter?.adopt(message.rateLimitSlots);
        keys.setAllowed({ keyIds: message.keyIds, adminKeyIds: message.adminKeyIds });
        break;
      case 'gather':
        void registry?.getMetricsAsJSON().then((metrics) => {
          send({ type: 'gathered', id: message.id, metrics });
        });
        break;
      case 'reply': {
        const pending = waiting.get(message.id);
        waiting.delete(message.id);
        if (!message.error) pending?.resolve(message.value);
        else if (message.error.code === 'internal')
          pending?.reject(new Error(message.error.message));
        else
          pending?.reject(
            new InstanceError(message.error.code as InstanceErrorCode, message.error.message),
          );
        break;
      }
      case 'close':
        void close(message.drainMs);
        break;
    }
  });

  // Same drain as the main thread: stop accepting, finish the requests in flight, cut the rest.
  const close = async (drainMs: number) => {
    state.stop();
    const cut = setTimeout(() => app.server.closeAllConnections(), drainMs);
    try {
      await app.close();
    } finally {
      clearTimeout(cut);
      await tracing?.shutdown().catch(() => {});
      port.close();
    }
  };
  await listenWhenReady();
}
