import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import process from 'node:process';
import { createInterface } from 'node:readline';

/** What a local S3 server stored or removed, in order: `ObjectCreated:Put`, `ObjectRemoved:Delete`… */
export interface S3Event {
  readonly name: string;
  readonly key: string;
}

/** A local S3 server (s3rver) for tests of real S3 clients: S3 itself cannot run here. */
export interface LocalS3 {
  readonly endpoint: string;
  /** Every object event so far (in-process servers only; empty for a paging one). */
  readonly events: readonly S3Event[];
  close(): Promise<void>;
}

/** The part of s3rver (CommonJS, untyped) used here. */
interface S3rverServer {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  on(
    event: 'event',
    listener: (event: {
      Records: readonly { eventName: string; s3: { object: { key: string } } }[];
    }) => void,
  ): void;
}
const S3RVER_PATH = createRequire(import.meta.url).resolve('s3rver');
const S3rver = createRequire(import.meta.url)(S3RVER_PATH) as new (
  options: Record<string, unknown>,
) => S3rverServer;

/** An s3rver in this process on 127.0.0.1, storing under `directory`, with `buckets` made. */
export async function startLocalS3(
  directory: string,
  buckets: readonly string[] = [],
): Promise<LocalS3> {
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  const events: S3Event[] = [];
  server.on('event', ({ Records }) => {
    for (const record of Records)
      events.push({ name: record.eventName, key: record.s3.object.key });
  });
  const { port } = await server.run();
  return { endpoint: `http://127.0.0.1:${port}`, events, close: () => server.close() };
}

/**
 * An s3rver in a process of its own, for ListObjectsV2 pages: it encrypts continuation tokens
 * with DES, which OpenSSL 3 refuses unless its legacy provider is loaded, and only a process's
 * start can load that. It exits when closed, or when the test process goes.
 */
export async function startPagingLocalS3(directory: string, bucket: string): Promise<LocalS3> {
  const script = `
    const S3rver = require(${JSON.stringify(S3RVER_PATH)});
    const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true,
      directory: ${JSON.stringify(directory)}, configureBuckets: [{ name: ${JSON.stringify(bucket)} }] });
    server.run().then(({ port }) => console.log(port));
    process.stdin.on('end', () => process.exit(0)).resume();`;
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [port] = await Promise.race([
    once(createInterface({ input: child.stdout }), 'line'),
    once(child, 'exit').then(() => []),
  ]);
  if (port === undefined) throw new Error('The paging S3 server did not start.');
  return {
    endpoint: `http://127.0.0.1:${port}`,
    events: [],
    async close() {
      if (child.exitCode !== null) return;
      child.stdin?.end();
      await once(child, 'exit');
    },
  };
}
