import type { CompiledTable } from '@replix/engine';
import type { SharedChunk } from '@replix/engine/storage';
import type { SnapshotShare } from '@replix/sources';

/** What the loading thread sends a load worker. */
export type LoadRequest =
  | { readonly type: 'join'; readonly share: SnapshotShare }
  | { readonly type: 'read'; readonly table: CompiledTable }
  | { readonly type: 'close' };

/** What a load worker answers. */
export type LoadReply =
  | { readonly type: 'ready' }
  | { readonly type: 'joined' }
  | { readonly type: 'rows'; readonly rows: number }
  | {
      readonly type: 'table';
      readonly chunks: readonly SharedChunk[];
      readonly liveRows: number;
    }
  | { readonly type: 'failed'; readonly error: PostedError }
  | { readonly type: 'closed' };

/** An error as it crosses threads: its class is lost, its code and message are kept. */
export interface PostedError {
  readonly name: string;
  readonly message: string;
  readonly code: string | undefined;
}

export function postedError(error: unknown): PostedError {
  const { name, message, code } = error as { name?: unknown; message?: unknown; code?: unknown };
  return {
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? message : String(error),
    code: typeof code === 'string' ? code : undefined,
  };
}
