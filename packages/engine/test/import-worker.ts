/**
 * A worker for shared-generation.test.ts: imports the generation it is sent, reports how much
 * its own heap and array buffers grew doing so, and answers queries over it.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { importGeneration, type SharedGeneration } from '../src/storage/shared-generation.ts';
import { runQuery } from './fixtures.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const port = parentPort;
if (!port) throw new Error('import-worker.ts runs as a worker');

const schema = compileSchema(workerData.source, parseSchemaConfig({}));
const used = () => {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};

const before = used();
port.postMessage({ ready: true });
port.once('message', (message: { generation: SharedGeneration; queries: string[] }) => {
  const generation = importGeneration(schema, message.generation);
  const growth = used() - before;
  const answers = message.queries.map((text) => runQuery(schema, generation, text).data);
  port.postMessage({ growth, answers });
});
