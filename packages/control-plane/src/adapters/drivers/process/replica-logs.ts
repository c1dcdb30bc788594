import type { LogChunk } from '../driver.ts';
import { readLogChunk, TAIL_LINES } from '../log-file.ts';

/** Separates the replicas' byte offsets in a merged log's token (`<offset 0>.<offset 1>…`). */
const TOKEN_SEPARATOR = '.';

/**
 * Reads the logs of an instance's replicas as one log: each replica's file from its own byte
 * offset, the lines merged in time order (stable: a replica's own lines keep their order).
 * With one replica this is `readLogChunk` itself, token and lines unchanged. With several, the
 * token is the replicas' offsets by ordinal joined by dots (`1520.880`: replica 0 from byte
 * 1520, replica 1 from byte 880) and every line starts with `[replica <ordinal>] `. A missing or
 * malformed part of a token reads that replica's tail, as a missing token does.
 */
export async function readReplicaLogs(
  paths: readonly string[],
  token: string | undefined,
): Promise<LogChunk> {
  if (paths.length === 1) return readLogChunk(paths[0] as string, token);
  const offsets = token?.split(TOKEN_SEPARATOR) ?? [];
  const chunks = await Promise.all(
    paths.map((path, ordinal) => readLogChunk(path, offsets[ordinal] || undefined)),
  );
  const lines = chunks
    .flatMap((chunk, ordinal) =>
      chunk.lines.map((line) => ({ ...line, message: `[replica ${ordinal}] ${line.message}` })),
    )
    // Array.prototype.sort is stable: equal times keep replica then line order.
    .sort((a, b) => a.timestamp - b.timestamp);
  return {
    lines: token === undefined ? lines.slice(-TAIL_LINES) : lines,
    nextToken: chunks.map((chunk) => chunk.nextToken).join(TOKEN_SEPARATOR),
  };
}
