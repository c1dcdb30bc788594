import type { SchemaConfig, SharedGeneration, SourceSchema } from '@replix/engine';
import type { HttpLimits, TracingSettings } from '@replix/runtime';
import type { SharedRateLimits } from '../http/rate-limiter.ts';
import type { PublicationBuffers } from './publication-board.ts';
import type { HealthStatus } from './served-state.ts';

/** Marks a worker as a query thread: only such a worker runs `runQueryThread` on load. */
export const QUERY_THREAD_MARK = 'replixQueryThread';

/** A query thread's `workerData`: what it needs to build the same server as the main thread. */
export interface QueryThreadData {
  readonly [QUERY_THREAD_MARK]: true;
  /** 1 to threads - 1 (the main thread is 0). */
  readonly thread: number;
  readonly threads: number;
  readonly board: PublicationBuffers;
  readonly bootId: string;
  readonly source: SourceSchema;
  readonly schemaConfig: SchemaConfig;
  readonly keySecret: Uint8Array;
  readonly keyIds: readonly string[];
  readonly adminKeyIds: readonly string[];
  /** The main thread's rate limiter, shared (absent: no limits). */
  readonly rateLimits: SharedRateLimits | undefined;
  readonly version: string;
  readonly maxBodyBytes: number;
  readonly logLevel: string;
  readonly httpLimits: HttpLimits | undefined;
  readonly host: string;
  readonly port: number;
  /** Each thread exports its own spans (an SDK is per thread); absent: tracing is off. */
  readonly tracing: TracingSettings | undefined;
}

export function isQueryThreadData(data: unknown): data is QueryThreadData {
  return typeof data === 'object' && data !== null && QUERY_THREAD_MARK in data;
}

/** What a query thread asks the main thread to do (the controller and replication live there). */
export type QueryThreadAction = 'reload' | 'pause' | 'resume' | 'metrics';

export type ToQueryThread =
  | { readonly type: 'generation'; readonly shared: SharedGeneration; readonly bytes: number }
  | {
      readonly type: 'status';
      readonly health: HealthStatus;
      readonly detail: Record<string, unknown>;
    }
  | {
      readonly type: 'keys';
      readonly keyIds: string[];
      readonly adminKeyIds: string[];
      /** Each key's rate limit slot, when limits are on. */
      readonly rateLimitSlots: Record<string, number> | undefined;
    }
  | { readonly type: 'gather'; readonly id: number }
  | {
      readonly type: 'reply';
      readonly id: number;
      readonly value?: unknown;
      readonly error?: { readonly code: string; readonly message: string } | null;
    }
  | { readonly type: 'close'; readonly drainMs: number };

export type FromQueryThread =
  | { readonly type: 'listening' }
  | { readonly type: 'held'; readonly id: number }
  | { readonly type: 'gathered'; readonly id: number; readonly metrics: unknown }
  | { readonly type: 'action'; readonly id: number; readonly action: QueryThreadAction };
