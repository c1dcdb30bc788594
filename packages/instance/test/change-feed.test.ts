import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  ChangeFeed,
  encodeFrame,
  type FeedFrame,
  FrameReader,
} from '../src/replication/change-feed.ts';

type GenerationFrame = Extract<FeedFrame, { kind: 'generation' }>;

function frame(previous: number, changes = 1): GenerationFrame {
  return {
    kind: 'generation',
    previous,
    generation: previous + 1,
    swapCount: previous + 1,
    changes: [['t', Array.from({ length: changes }, (_, i) => ({ op: 'insert', row: [i] }))]],
  };
}

describe('the change feed', () => {
  it('gives a follower what came after its generation, then each new one', () => {
    const feed = new ChangeFeed('boot-a', () => {});
    feed.restart(10, 'cp-10');
    feed.publish(frame(10));
    feed.publish(frame(11));
    const heard: FeedFrame[] = [];
    const followed = feed.follow('boot-a', 11, (f) => heard.push(f));
    if (!('frames' in followed)) throw new Error('expected frames');
    expect(followed.frames.map((f) => (f as GenerationFrame).generation)).toEqual([12]);
    feed.publish(frame(12));
    expect(heard.map((f) => (f as GenerationFrame).generation)).toEqual([13]);
    followed.stop();
    feed.publish(frame(13));
    expect(heard).toHaveLength(1);
  });

  it('names the checkpoint to start over from for another boot, a generation it lacks, or none', () => {
    const feed = new ChangeFeed('boot-a', () => {});
    expect(feed.restartPoint()).toEqual({ boot: 'boot-a', checkpoint: null, generation: null });
    feed.restart(10, null);
    feed.publish(frame(10));
    feed.checkpointed(11, 'cp-11');
    const restart = { boot: 'boot-a', checkpoint: 'cp-11', generation: 11 };
    expect(feed.follow('boot-b', 11, () => {})).toEqual(restart);
    expect(feed.follow('boot-a', 9, () => {})).toEqual(restart);
    expect(feed.follow('boot-a', 12, () => {})).toEqual(restart);
    expect('frames' in feed.follow('boot-a', 10, () => {})).toBe(true);
  });

  it('drops a frame that does not follow on from the latest', () => {
    const feed = new ChangeFeed('boot-a', () => {});
    feed.restart(10, 'cp-10');
    feed.publish(frame(20));
    expect(feed.report()).toMatchObject({ latest_generation: 10, generations_held: 0 });
  });

  it('keeps a bounded window, and asks for a checkpoint once its own falls out of it', () => {
    let overflows = 0;
    const feed = new ChangeFeed('boot-a', () => {
      overflows += 1;
    });
    feed.restart(0, 'cp-0');
    for (let generation = 0; generation < 30; generation++) feed.publish(frame(generation, 10_000));
    expect(feed.report()).toMatchObject({ changes_held: 200_000, generations_held: 20 });
    expect(feed.report().oldest_generation).toBe(10);
    expect(overflows).toBe(1);
    expect(feed.restartPoint().checkpoint).toBeNull();
    expect('frames' in feed.follow('boot-a', 9, () => {})).toBe(false);
    expect('frames' in feed.follow('boot-a', 10, () => {})).toBe(true);
  });

  it('ends its followers at a restart', () => {
    const feed = new ChangeFeed('boot-a', () => {});
    feed.restart(1, 'cp-1');
    const heard: FeedFrame[] = [];
    feed.follow('boot-a', 1, (f) => heard.push(f));
    feed.restart(7, null);
    expect(heard).toEqual([{ kind: 'synced', generation: 7, ageMs: -1 }]);
    expect(feed.report().followers).toBe(0);
  });
});

describe('feed frames on the wire', () => {
  it('come back whole, bigints and Buffers included, however the bytes are cut', () => {
    const frames: FeedFrame[] = [
      {
        kind: 'generation',
        previous: 1,
        generation: 2,
        swapCount: 2,
        changes: [['t', [{ op: 'insert', row: [2n ** 70n, Buffer.from('ab'), Number.NaN, null] }]]],
      },
      { kind: 'synced', generation: 2, ageMs: 15 },
    ];
    const bytes = Buffer.concat(frames.map(encodeFrame));
    for (const cut of [1, 3, 5, 17, bytes.length]) {
      const reader = new FrameReader();
      const read: FeedFrame[] = [];
      for (let at = 0; at < bytes.length; at += cut)
        read.push(...reader.push(bytes.subarray(at, at + cut)));
      expect(read).toEqual(frames);
      const row = (read[0] as GenerationFrame).changes[0]?.[1][0] as unknown as { row: unknown[] };
      expect(Buffer.isBuffer(row.row[1])).toBe(true);
    }
  });
});
