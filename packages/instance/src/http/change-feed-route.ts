import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, RawServerDefault } from 'fastify';
import type { Logger } from 'pino';
import { type ChangeFeed, encodeFrame, type FeedFrame } from '../replication/change-feed.ts';
import type { ServedState } from '../threads/served-state.ts';

/** How often a follower hears how fresh the leader's snapshot is, when nothing changes. */
const SYNCED_EVERY_MS = 250;
/**
 * A follower with this much unread when a frame is due is cut off (it starts over from a
 * checkpoint): what a reader that stops can hold is this and one frame.
 */
const MAX_UNREAD_BYTES = 16 * 1024 * 1024;
/** Feeds open at once: a database has at most 9 followers; the rest are refused with 429. */
const MAX_FEEDS = 16;

/**
 * `GET /internal/changes?boot=<leader boot>&after=<generation>` (admin): the leader's feed to
 * a follower replica, as length-prefixed frames (`change-feed.ts`) for as long as the follower
 * reads: every generation after `after`, then each new one, and every 250 ms how fresh the
 * served one is. A generation the feed does not hold, or another boot's, gets 409
 * `follow_restart` with the checkpoint to load first.
 */
type InstanceApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger>;

export function registerChangeFeedRoute(
  app: InstanceApp,
  feed: ChangeFeed,
  controller: Pick<ServedState, 'current'>,
): void {
  const open = new Set<() => void>();
  // Feeds never end on their own: closing ends them, so the drain is not held up.
  app.addHook('preClose', (done) => {
    for (const end of open) end();
    done();
  });
  app.get('/internal/changes', { config: { auth: 'admin' } }, (request, reply) => {
    const { boot, after } = request.query as { boot?: unknown; after?: unknown };
    const generation = Number(after);
    const restart = () =>
      reply.code(409).send({
        error: {
          code: 'follow_restart',
          message:
            "The leader's change feed does not hold this generation; load the named checkpoint and ask again.",
        },
        restart: feed.restartPoint(),
      });
    if (typeof boot !== 'string' || typeof after !== 'string' || !Number.isSafeInteger(generation))
      return restart();
    if (open.size >= MAX_FEEDS) {
      return reply
        .code(429)
        .header('retry-after', '1')
        .send({
          error: { code: 'too_many_requests', message: 'Too many change feeds are open; retry.' },
        });
    }
    const response = reply.raw;
    let ended = false;
    const send = (frame: FeedFrame) => {
      if (ended) return;
      // A restart ends the stream: the follower asks again and is told where to start over.
      if (frame.kind === 'synced' && frame.ageMs < 0) return end(true);
      if (response.writableLength > MAX_UNREAD_BYTES) return end(false);
      response.write(encodeFrame(frame));
    };
    const following = feed.follow(boot, generation, send);
    if (!('frames' in following)) return restart();
    const followed = following;
    reply.hijack();
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'cache-control': 'no-store',
    });
    // The follower knows at once it follows, before any frame is due.
    response.flushHeaders();
    const timer = setInterval(() => {
      const served = controller.current();
      if (served) send({ kind: 'synced', generation: served.generation.id, ageMs: served.ageMs });
    }, SYNCED_EVERY_MS);
    function end(cleanly: boolean) {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      followed.stop();
      if (cleanly) response.end();
      else response.destroy();
    }
    response.on('close', () => end(false));
    const endCleanly = () => end(true);
    open.add(endCleanly);
    response.once('close', () => open.delete(endCleanly));
    for (const frame of followed.frames) send(frame);
  });
}
