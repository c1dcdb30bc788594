import { Worker } from 'node:worker_threads';
import type { CompiledTable } from '@replix/engine';
import { importChunk, type TableData } from '@replix/engine/storage';
import { type SnapshotShare, SourceError, type SourceErrorCode } from '@replix/sources';
import type { LoadReply, LoadRequest, PostedError } from './load-messages.ts';

const WORKER_URL = new URL('./load-worker.ts', import.meta.url);

/** How long a worker may take to close its session before it is terminated outright. */
const CLOSE_TIMEOUT_MS = 5000;

interface Pending {
  readonly expect: LoadReply['type'];
  readonly resolve: (reply: LoadReply) => void;
  readonly reject: (error: Error) => void;
  readonly onRows?: (rows: number) => void;
}

/** The loading thread's side of one load worker (`load-worker.ts`): one request at a time. */
export class LoadWorkerHandle {
  readonly #worker: Worker;
  #pending: Pending | null = null;
  #gone: Error | null = null;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (reply: LoadReply) => this.#reply(reply));
    worker.on('error', (error) => this.#end(error));
    worker.on('exit', () => this.#end(new Error('a load worker exited')));
  }

  /** Starts a worker and waits until its modules, `backend`'s driver included, are loaded. */
  static async start(backend: string): Promise<LoadWorkerHandle> {
    const handle = new LoadWorkerHandle(new Worker(WORKER_URL, { workerData: { backend } }));
    try {
      await handle.#expect('ready');
    } catch (error) {
      await handle.#worker.terminate();
      throw error;
    }
    return handle;
  }

  /** Opens the worker's own session on the shared snapshot. */
  async join(share: SnapshotShare): Promise<void> {
    await this.#request({ type: 'join', share }, 'joined');
  }

  /** Reads one table in the worker; its chunks arrive sharing their memory. */
  async read(table: CompiledTable, onRows: (rows: number) => void): Promise<TableData> {
    const reply = await this.#request({ type: 'read', table }, 'table', onRows);
    if (reply.type !== 'table') throw new Error(`unexpected ${reply.type}`);
    return { chunks: reply.chunks.map(importChunk), liveRows: reply.liveRows };
  }

  /** Ends the worker's session and the worker; mid-read, the worker is terminated at once. */
  async close(): Promise<void> {
    if (this.#gone) return;
    if (this.#pending === null) {
      const closed = this.#request({ type: 'close' }, 'closed').catch(() => {});
      const timeout = new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS).unref());
      await Promise.race([closed, timeout]);
    }
    await this.#worker.terminate();
  }

  #request(
    request: LoadRequest,
    expect: LoadReply['type'],
    onRows?: (rows: number) => void,
  ): Promise<LoadReply> {
    const reply = this.#expect(expect, onRows);
    this.#worker.postMessage(request);
    return reply;
  }

  #expect(expect: LoadReply['type'], onRows?: (rows: number) => void): Promise<LoadReply> {
    if (this.#gone) return Promise.reject(this.#gone);
    if (this.#pending) return Promise.reject(new Error('a load worker runs one request at a time'));
    return new Promise<LoadReply>((resolve, reject) => {
      this.#pending = { expect, resolve, reject, ...(onRows ? { onRows } : {}) };
    });
  }

  #reply(reply: LoadReply): void {
    const pending = this.#pending;
    if (!pending) return;
    if (reply.type === 'rows') {
      pending.onRows?.(reply.rows);
      return;
    }
    this.#pending = null;
    if (reply.type === 'failed') pending.reject(receivedError(reply.error));
    else if (reply.type !== pending.expect) pending.reject(new Error(`unexpected ${reply.type}`));
    else pending.resolve(reply);
  }

  #end(error: Error): void {
    this.#gone ??= error;
    const pending = this.#pending;
    this.#pending = null;
    pending?.reject(error);
  }
}

/** The posted error back as an error: a `SourceError` with its code when it was one. */
export function receivedError(posted: PostedError): Error {
  const error =
    posted.code !== undefined && posted.name.startsWith('Source')
      ? new SourceError(posted.code as SourceErrorCode, posted.message)
      : new Error(posted.message);
  error.name = posted.name;
  return error;
}
