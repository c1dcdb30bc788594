import { once } from 'node:events';
import { get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerChangeFeedRoute } from '../src/http/change-feed-route.ts';
import { ChangeFeed } from '../src/replication/change-feed.ts';

const apps: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function feedServer(feed: ChangeFeed): Promise<string> {
  const app = Fastify();
  apps.push(app);
  registerChangeFeedRoute(app as unknown as Parameters<typeof registerChangeFeedRoute>[0], feed, {
    current: () => null,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** A GET whose body is never read: the client that stops reading. */
async function openFeed(url: string): Promise<IncomingMessage> {
  const request = get(url, { agent: false });
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  response.pause();
  return response;
}

describe('the change feed route', () => {
  it('refuses a feed past the 16th with 429, in the envelope', async () => {
    const feed = new ChangeFeed('boot-a', () => {});
    feed.restart(1, 'cp-1');
    const url = `${await feedServer(feed)}/internal/changes?boot=boot-a&after=1`;
    const open = await Promise.all(Array.from({ length: 16 }, () => openFeed(url)));
    expect(open.map((response) => response.statusCode)).toEqual(Array(16).fill(200));
    const refused = await openFeed(url);
    expect(refused.statusCode).toBe(429);
    refused.resume();
    const [body] = await once(refused, 'data');
    expect(JSON.parse(String(body)).error.code).toBe('too_many_requests');
    for (const response of open) response.destroy();
  });

  it('cuts off a follower that stops reading, holding at most 16 MiB and a frame for it', async () => {
    const feed = new ChangeFeed('boot-a', () => {});
    feed.restart(1, 'cp-1');
    const response = await openFeed(
      `${await feedServer(feed)}/internal/changes?boot=boot-a&after=1`,
    );
    let cutAfter = 0;
    for (let generation = 1; generation <= 2000; generation++) {
      feed.publish({
        kind: 'generation',
        previous: generation,
        generation: generation + 1,
        swapCount: generation,
        // Rows of their own: V8's serialization writes a repeated object once.
        changes: [
          [
            't',
            Array.from({ length: 100 }, (_, i) => ({
              op: 'insert',
              row: [`${generation}:${i}`.padEnd(1024, 'x')],
            })),
          ],
        ],
      });
      if (feed.report().followers === 0) {
        cutAfter = generation;
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    // About 100 KiB a frame: cut once the kernel's buffers and 16 MiB are full, well before 1,000.
    expect(feed.report().followers).toBe(0);
    expect(cutAfter).toBeGreaterThan(100);
    expect(cutAfter).toBeLessThan(1000);
    response.destroy();
  });

  it('answers 409 follow_restart with the checkpoint to load for a malformed ask', async () => {
    const feed = new ChangeFeed('boot-a', () => {});
    feed.restart(3, 'cp-3');
    const base = await feedServer(feed);
    for (const query of ['', '?boot=boot-a', '?boot=boot-a&after=x', '?boot=other&after=3']) {
      const response = await fetch(`${base}/internal/changes${query}`);
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({
        error: { code: 'follow_restart' },
        restart: { boot: 'boot-a', checkpoint: 'cp-3', generation: 3 },
      });
    }
  });
});
