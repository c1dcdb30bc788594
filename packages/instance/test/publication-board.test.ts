import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { PublicationBoard } from '../src/threads/publication-board.ts';

describe('the publication board', () => {
  it('names nothing until the first publication, then the latest one', () => {
    const board = new PublicationBoard(2);
    expect(board.served()).toEqual({ generationId: 0, swapCount: 0 });
    for (let swap = 0; swap < 200; swap++) {
      board.publish(swap + 1, swap);
      expect(board.served()).toEqual({ generationId: swap + 1, swapCount: swap });
    }
  });

  it('is the same board on another thread, and sums the other threads in-flight bytes', async () => {
    const board = new PublicationBoard(3);
    board.publish(7, 3);
    board.setInFlightBytes(0, 100);
    board.setInFlightBytes(2, 30);
    board.workingLimitBytes = 1000;
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      const word = new Int32Array(workerData.word);
      const slot = Atomics.load(word, 0);
      const figures = new Float64Array(workerData.figures);
      figures[3] = 5;
      parentPort.postMessage([word[2 * slot - 1], word[2 * slot], figures[1]]);
    `;
    const worker = new Worker(source, { eval: true, workerData: board.buffers });
    const seen = await new Promise((resolve) => worker.once('message', resolve));
    await worker.terminate();
    expect(seen).toEqual([7, 3, 1000]);
    expect(board.inFlightBytes()).toBe(135);
    expect(board.inFlightBytes(0)).toBe(35);
    // Bytes held for clients are figures of their own, beside the in-flight ones.
    board.setClientHeldBytes(1, 9);
    board.setClientHeldBytes(2, 4);
    expect(board.clientHeldBytes()).toBe(13);
    expect(board.clientHeldBytes(2)).toBe(9);
    expect(board.inFlightBytes()).toBe(135);
    expect(new PublicationBoard(3, board.buffers).served()).toEqual({
      generationId: 7,
      swapCount: 3,
    });
  });
});
