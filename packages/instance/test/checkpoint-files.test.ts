import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  compileSchema,
  exportGeneration,
  type Generation,
  GenerationBuilder,
  importGeneration,
  parseSchemaConfig,
  QueryEngine,
  type SourceSchema,
} from '@replix/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CHECKPOINT_FORMAT,
  CheckpointError,
  newestCheckpoint,
  pruneCheckpoints,
  readCheckpoint,
  writeCheckpoint,
} from '../src/snapshot/checkpoint-files.ts';
import { checkpointFingerprint } from '../src/snapshot/checkpoint-fingerprint.ts';

const source: SourceSchema = {
  tables: [
    {
      name: 't',
      columns: [
        { name: 'id', type: 'int', nullable: false, sourceType: 'int' },
        { name: 'name', type: 'string', nullable: true, sourceType: 'varchar(20)' },
        { name: 'price', type: 'float', nullable: true, sourceType: 'double' },
      ],
      primaryKey: ['id'],
      uniqueKeys: [],
      foreignKeys: [],
      estimatedRows: null,
    },
  ],
};
const schema = compileSchema(source, parseSchemaConfig({}));

function generation(id: number, rows: number): Generation {
  const builder = new GenerationBuilder(schema);
  builder
    .loader('t')
    .appendRows(Array.from({ length: rows }, (_, i) => [i + 1, i % 7 ? `name ${i}` : null, i / 4]));
  return builder.finish(id);
}

const META = { version: 'test', swapCount: 0, ageMs: 0 };
const answer = (g: Generation, text: string) =>
  JSON.parse(new QueryEngine(schema).execute(g, text, META)).data;
const QUERY = 't (name IS NOT NULL AND price > 100) { id name price } ORDER BY id DESC LIMIT 50';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'replix-checkpoints-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The one problem reading `name` finds, or undefined when it reads. */
async function problemOf(name: string, fingerprint = 'fp'): Promise<string | undefined> {
  try {
    await readCheckpoint(join(dir, name), fingerprint);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(CheckpointError);
    return (error as CheckpointError).problem;
  }
}

describe('a checkpoint on disk', () => {
  it('gives back the generation it was written from, with its position and fingerprint', async () => {
    const original = generation(7, 5000);
    const name = await writeCheckpoint(dir, exportGeneration(original), {
      fingerprint: 'fp',
      position: 'mysql-bin.000003:1234',
    });
    expect(readdirSync(join(dir, name)).sort()).toEqual([
      'buffers.bin',
      'manifest.json',
      'structure.json',
    ]);
    const { manifest, generation: shared } = await readCheckpoint(join(dir, name), 'fp');
    expect(manifest).toMatchObject({
      format: CHECKPOINT_FORMAT,
      fingerprint: 'fp',
      position: 'mysql-bin.000003:1234',
      generationId: 7,
    });
    const read = importGeneration(schema, shared);
    expect(answer(read, QUERY)).toEqual(answer(original, QUERY));
    expect(answer(read, QUERY).length).toBe(50);
  });

  it('is refused when of another schema config or format, truncated, changed, or unfinished', async () => {
    const write = () =>
      writeCheckpoint(dir, exportGeneration(generation(1, 2000)), {
        fingerprint: 'fp',
        position: null,
      });
    expect(await problemOf(await write(), 'other')).toBe('fingerprint');

    const truncated = await write();
    const bin = join(dir, truncated, 'buffers.bin');
    truncateSync(bin, readFileSync(bin).byteLength - 1);
    expect(await problemOf(truncated)).toBe('damaged');

    const flipped = await write();
    const bytes = readFileSync(join(dir, flipped, 'buffers.bin'));
    bytes[Math.floor(bytes.length / 2)] ^= 0x01;
    writeFileSync(join(dir, flipped, 'buffers.bin'), bytes);
    expect(await problemOf(flipped)).toBe('damaged');

    const structure = await write();
    const text = readFileSync(join(dir, structure, 'structure.json'), 'utf8');
    writeFileSync(join(dir, structure, 'structure.json'), text.replace('"t"', '"u"'));
    expect(await problemOf(structure)).toBe('damaged');

    const future = await write();
    const manifest = JSON.parse(readFileSync(join(dir, future, 'manifest.json'), 'utf8'));
    writeFileSync(
      join(dir, future, 'manifest.json'),
      JSON.stringify({ ...manifest, format: CHECKPOINT_FORMAT + 1 }),
    );
    expect(await problemOf(future)).toBe('format');

    const unfinished = await write();
    rmSync(join(dir, unfinished, 'manifest.json'));
    expect(await problemOf(unfinished)).toBe('unfinished');
  });

  it('is the newest usable one, and the newer ones it skipped say why', async () => {
    const older = await writeCheckpoint(dir, exportGeneration(generation(3, 100)), {
      fingerprint: 'fp',
      position: 'old',
    });
    const newer = await writeCheckpoint(dir, exportGeneration(generation(4, 200)), {
      fingerprint: 'fp',
      position: 'new',
    });
    const bin = join(dir, newer, 'buffers.bin');
    truncateSync(bin, 10);
    // A write that did not finish (still under its partial name) is not even looked at.
    const partial = await writeCheckpoint(dir, exportGeneration(generation(5, 50)), {
      fingerprint: 'fp',
      position: 'partial',
    });
    renameSync(join(dir, partial), join(dir, `${partial}.partial`));
    const found = await newestCheckpoint(dir, 'fp');
    expect(found.checkpoint?.manifest.position).toBe('old');
    expect(found.checkpoint?.manifest.generationId).toBe(3);
    expect(found.skipped.map(({ name, error }) => [name, error.problem])).toEqual([
      [newer, 'damaged'],
    ]);
    expect(older < newer).toBe(true);
    expect((await newestCheckpoint(dir, 'another')).checkpoint).toBeUndefined();
    expect((await newestCheckpoint(join(dir, 'none'), 'fp')).checkpoint).toBeUndefined();
  });

  it('keeps the newest two when pruned, and removes abandoned unfinished writes', async () => {
    const names = [];
    for (let id = 1; id <= 4; id++) {
      names.push(
        await writeCheckpoint(dir, exportGeneration(generation(id, 10)), {
          fingerprint: 'fp',
          position: String(id),
        }),
      );
    }
    const partial = join(dir, `${names[3]}.partial`);
    renameSync(join(dir, names[3] as string), partial);
    // A write under way (touched lately) is another writer's, left alone.
    expect(await pruneCheckpoints(dir, 2)).toEqual([names[0]]);
    expect(readdirSync(dir).sort()).toEqual([names[1], names[2], `${names[3]}.partial`]);
    // One untouched for long was cut short, and goes.
    const old = new Date(Date.now() - 3_600_000);
    for (const entry of readdirSync(partial)) utimesSync(join(partial, entry), old, old);
    utimesSync(partial, old, old);
    expect(await pruneCheckpoints(dir, 2)).toEqual([`${names[3]}.partial`]);
    expect(readdirSync(dir).sort()).toEqual([names[1], names[2]]);
  });
});

describe('a checkpoint fingerprint', () => {
  const url = 'postgres://reader:secret@db.internal:5432/shop';
  const of = (
    sourceUrl = url,
    config: Record<string, unknown> = {},
    described: SourceSchema = source,
  ) =>
    checkpointFingerprint(
      sourceUrl,
      described,
      compileSchema(described, parseSchemaConfig(config)),
    );

  it('is the same across credentials, row estimates, and settings that shape no row', () => {
    expect(of('postgres://other:pw@db.internal:5432/shop')).toBe(of());
    const estimated = { tables: source.tables.map((t) => ({ ...t, estimatedRows: 1234 })) };
    expect(of(url, {}, estimated)).toBe(of());
    // A resize changes the memory cap and the query limits: its checkpoints still serve.
    expect(of(url, { memory_cap_mb: 64, query: { timeout_ms: 500 } })).toBe(of());
    expect(of(url, { sync: { interval: 5, safety_net: 60 } })).toBe(of());
  });

  it('changes with the source, the schema config and a served column', () => {
    const base = of();
    expect(of('postgres://reader:secret@db.internal:5432/other')).not.toBe(base);
    expect(of('postgres://reader:secret@replica.internal:5432/shop')).not.toBe(base);
    expect(of(url, { where: 'price > 0', where_columns: ['price'] })).not.toBe(base);
    expect(of(url, { sync: { mode: 'poll' } })).not.toBe(base);
    const retyped = {
      tables: source.tables.map((t) => ({
        ...t,
        columns: t.columns.map((c) => (c.name === 'price' ? { ...c, sourceType: 'float' } : c)),
      })),
    };
    expect(of(url, {}, retyped)).not.toBe(base);
  });

  it('leaves out tables the config does not serve', () => {
    const table = source.tables[0] as SourceSchema['tables'][number];
    const more = { tables: [...source.tables, { ...table, name: 'unserved' }] };
    const only = { tables: [{ name: 't' }] };
    expect(of(url, only, more)).toBe(of(url, only));
  });
});
