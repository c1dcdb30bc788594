import {
  compileSchema,
  exportGeneration,
  type Generation,
  GenerationBuilder,
  importGeneration,
  parseSchemaConfig,
} from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { PublicationBoard } from '../src/threads/publication-board.ts';
import { type InstanceStatus, PublishedState } from '../src/threads/published-state.ts';
import type { HealthStatus } from '../src/threads/served-state.ts';

const schema = compileSchema(
  {
    tables: [
      {
        name: 't',
        columns: [{ name: 'id', type: 'int', nullable: false, sourceType: 'int' }],
        primaryKey: ['id'],
        uniqueKeys: [],
        foreignKeys: [],
        estimatedRows: null,
      },
    ],
  },
  parseSchemaConfig({}),
);

function generation(id: number, rows: number): Generation {
  const builder = new GenerationBuilder(schema);
  builder.loader('t').appendRows(Array.from({ length: rows }, (_, i) => [i + 1]));
  return builder.finish(id);
}

function controllerStatus(health: HealthStatus): InstanceStatus {
  return {
    health: () => health,
    detail: () => ({ status: health, snapshot: null, memory: { cap_mb: null } }),
    startReload: async () => ({ done: Promise.resolve() }),
  };
}

describe("a thread's published view of the snapshot", () => {
  it('serves what the board names, from the generations it holds, on every thread alike', () => {
    const board = new PublicationBoard(2);
    const main = new PublishedState(schema, 'boot', board, 0, controllerStatus('ok'));
    const worker = new PublishedState(
      schema,
      'boot',
      new PublicationBoard(2, board.buffers),
      1,
      controllerStatus('loading'),
    );
    expect([main.current(), worker.current()]).toEqual([null, null]);
    expect(worker.health()).toBe('loading');

    const first = generation(1, 3);
    main.hold(first, 100);
    worker.hold(importGeneration(schema, exportGeneration(first)), 100);
    board.publish(1, 0);
    expect(main.current()?.generation).toBe(first);
    expect(worker.current()?.generation.rowCounts()).toEqual({ t: 3 });
    // The controller's status reaches a worker after the flip: a served generation is loaded.
    expect(worker.health()).toBe('ok');

    // Held but not yet published: still the first on every thread.
    const second = generation(2, 5);
    main.hold(second, 200);
    worker.hold(importGeneration(schema, exportGeneration(second)), 200);
    expect(worker.current()?.generation.id).toBe(1);
    board.publish(2, 1);
    expect([main.current()?.swapCount, worker.current()?.swapCount]).toEqual([1, 1]);
    expect(worker.detail().snapshot).toMatchObject({
      generation: 2,
      swap_count: 1,
      bytes: 200,
      row_counts: { t: 5 },
    });
    // The flip passed the first: no thread keeps it.
    expect([main.held(1), worker.held(1)]).toEqual([undefined, undefined]);
  });

  it("gives each thread the instance's working memory less the other threads' queries", () => {
    const board = new PublicationBoard(2);
    board.workingLimitBytes = 1000;
    const main = new PublishedState(schema, 'boot', board, 0, controllerStatus('ok'));
    const worker = new PublishedState(schema, 'boot', board, 1, controllerStatus('ok'));
    let mainBytes = 300;
    main.countQueryMemory(() => mainBytes);
    worker.countQueryMemory(() => 0);
    expect(main.queryWorkingBytes()).toBe(1000);
    expect(worker.queryWorkingBytes()).toBe(700);
    mainBytes = 1200;
    main.queryWorkingBytes();
    expect(worker.queryWorkingBytes()).toBe(0);
    expect(worker.detail().memory).toMatchObject({
      query_working_bytes: 1200,
      query_working_limit_bytes: 1000,
    });
    main.stop();
    worker.stop();
  });

  it("reports the bytes every thread holds for clients in each thread's detail", () => {
    const board = new PublicationBoard(2);
    const main = new PublishedState(schema, 'boot', board, 0, controllerStatus('ok'));
    const worker = new PublishedState(schema, 'boot', board, 1, controllerStatus('ok'));
    let mainHeld = 40;
    main.countQueryMemory(() => 100 + mainHeld);
    main.countClientMemory(() => mainHeld);
    worker.countQueryMemory(() => 7);
    worker.countClientMemory(() => 7);
    main.queryWorkingBytes();
    expect(worker.detail().memory).toMatchObject({ client_held_bytes: 47 });
    mainHeld = 0;
    main.queryWorkingBytes();
    expect(worker.detail().memory).toMatchObject({ client_held_bytes: 7 });
    expect(main.detail().memory).toMatchObject({ client_held_bytes: 7 });
    main.stop();
    worker.stop();
  });
});
