import { type IncomingMessage, request } from 'node:http';
import { HTTP_LIMITS } from '@replix/runtime';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';

const ROWS = 70_000;
// About 15 MB of JSON: far more than socket buffers hold, so an answer the client has not
// read yet is still in flight at the instance.
const TABLE = `
  CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(200) NOT NULL);
  SET SESSION max_recursive_iterations = ${ROWS * 2};
  INSERT INTO t
    WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${ROWS})
    SELECT n, REPEAT('x', 190) FROM s;
`;

describe('stopping an instance', () => {
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let served: TestInstance;

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(TABLE);
    served = await startTestInstance(source.url);
  }, 120_000);
  afterAll(async () => {
    await source?.drop();
  });

  it('finishes the answer in flight, refuses new connections, then closes', async () => {
    const response = await answerNotYetRead(served);
    expect(response.statusCode).toBe(200);

    const closed = served.instance.close();
    // New connections are refused while the answer in flight goes on.
    await expect(fetch(`${served.url}/health`)).rejects.toThrow();
    let body = '';
    response.setEncoding('utf8');
    for await (const chunk of response) body += chunk;
    await closed;
    const answer = JSON.parse(body) as { data: Array<{ id: number }> };
    expect(answer.data).toHaveLength(ROWS);
    expect(answer.data.at(-1)?.id).toBe(ROWS);
  });

  it('cuts an answer still in flight after the drain bound, so a stop never hangs', async () => {
    const bounded = await startTestInstance(
      source.url,
      {},
      { httpLimits: { ...HTTP_LIMITS, drain_timeout_ms: 200 } },
    );
    const response = await answerNotYetRead(bounded);
    const ended = new Promise<boolean>((resolve) => {
      response.on('close', () => resolve(response.complete));
    });
    // The client never reads: only the bound ends the stop.
    await bounded.instance.close();
    response.resume();
    expect(await ended).toBe(false);
  });
});

/** A query answer whose headers arrived and whose body the client has not read yet. */
function answerNotYetRead(served: TestInstance): Promise<IncomingMessage> {
  const { port } = new URL(served.url);
  return new Promise((resolve, reject) => {
    const req = request({
      port: Number(port),
      host: '127.0.0.1',
      method: 'POST',
      path: '/query',
      headers: { authorization: `Bearer ${served.key}` },
    });
    req.on('response', (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end(`t { id pad } ORDER BY id LIMIT ${ROWS}`);
  });
}
