import type { Worker } from 'node:worker_threads';
import { parseSchemaConfig } from '@replix/engine';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import type { TracingSettings } from '@replix/runtime/tracing';
import type { RateLimitPolicy } from '../src/http/rate-limiter.ts';
import { type RunningInstance, type StartInstanceOptions, startInstance } from '../src/index.ts';
import type { CheckpointSettings } from '../src/instance-config.ts';
import { createLogger } from '../src/start-instance.ts';
import { type NewQueryWorker, newQueryWorker } from '../src/threads/query-threads.ts';

export interface TestInstance {
  readonly instance: RunningInstance;
  readonly url: string;
  /** A query key: it may query and read the schema. */
  readonly key: string;
  /** An admin key: it may also reload, pause replication, read metrics and health detail. */
  readonly adminKey: string;
  /** The instance's key secret, to make more keys (`deriveApiKey`). */
  readonly keySecret: Buffer;
  readonly keyId: string;
  readonly adminKeyId: string;
  query(
    text: string,
    init?: { method?: 'GET' | 'POST'; headers?: Record<string, string> },
  ): Promise<Response>;
  json(
    text: string,
  ): Promise<
    Record<string, unknown> & { data: Record<string, unknown>[]; meta: Record<string, never> }
  >;
  close(): Promise<void>;
}

/** Starts a real instance over `sourceUrl` on a free port, with one query key and one admin key. */
export async function startTestInstance(
  sourceUrl: string,
  schemaConfig: unknown = {},
  options: StartInstanceOptions & {
    readonly threads?: number;
    readonly rateLimit?: RateLimitPolicy;
    readonly tracing?: TracingSettings;
    readonly checkpoints?: CheckpointSettings;
    /** Another instance's keys, so that the two accept each other's (replicas of one database). */
    readonly sameKeysAs?: TestInstance;
    /** A port to listen on (0, the default: a free one). */
    readonly port?: number;
  } = {},
): Promise<TestInstance> {
  const keySecret = options.sameKeysAs?.keySecret ?? newKeySecret();
  const keyId = options.sameKeysAs?.keyId ?? newKeyId();
  const adminKeyId = options.sameKeysAs?.adminKeyId ?? newKeyId();
  const instance = await startInstance(
    {
      sourceUrl,
      schemaConfig: parseSchemaConfig(schemaConfig),
      host: '127.0.0.1',
      port: options.port ?? 0,
      keySecret,
      keyIds: [keyId],
      adminKeyIds: [adminKeyId],
      generatedKey: false,
      buildHash: 'testbuild000',
      logLevel: 'silent',
      threads: options.threads,
      rateLimit: options.rateLimit,
      tracing: options.tracing,
      checkpoints: options.checkpoints,
    },
    createLogger(process.env.REPLIX_TEST_LOG ?? 'silent'),
    options,
  );
  const key = deriveApiKey(keySecret, keyId);
  const query = (
    text: string,
    init: { method?: 'GET' | 'POST'; headers?: Record<string, string> } = {},
  ) => {
    const headers = { Authorization: `Bearer ${key}`, ...init.headers };
    if (init.method === 'GET') {
      return fetch(`${instance.url}/query?q=${encodeURIComponent(text)}`, { headers });
    }
    return fetch(`${instance.url}/query`, { method: 'POST', body: text, headers });
  };
  return {
    instance,
    url: instance.url,
    key,
    adminKey: deriveApiKey(keySecret, adminKeyId),
    keySecret,
    keyId,
    adminKeyId,
    query,
    async json(text: string) {
      const response = await query(text);
      const body = await json(response);
      if (response.status !== 200)
        throw new Error(`query failed ${response.status}: ${JSON.stringify(body)}`);
      return body;
    },
    close: () => instance.close(),
  };
}

/**
 * Query-thread workers a test can end as a crash would: pass `newQueryWorker` to
 * `startTestInstance`, then `crash(thread)` terminates the worker that thread runs on now.
 */
export function crashableQueryWorkers(): {
  readonly newQueryWorker: NewQueryWorker;
  crash(thread: number): Promise<void>;
} {
  const workers = new Map<number, Worker>();
  return {
    newQueryWorker: (thread, entry, options) => {
      const worker = newQueryWorker(thread, entry, options);
      workers.set(thread, worker);
      return worker;
    },
    async crash(thread) {
      await workers.get(thread)?.terminate();
    },
  };
}

/** A response body as loosely typed JSON, for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
export async function json(response: Response | Promise<Response>): Promise<any> {
  return (await response).json();
}
