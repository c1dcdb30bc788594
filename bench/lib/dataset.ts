import { closeSync, createReadStream, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DatabaseAdmin, TestDatabase } from '@replix/testkit';
import { mulberry32 } from '@replix/testkit/mulberry32';
import mysql, { type ResultSetHeader } from 'mysql2/promise';

/**
 * Scenario (h): the extremes of a DECIMAL and a timestamp and the distinct count of a column of
 * 100,000 values, per status, over the whole fact table (issue 32).
 */
export const MIN_MAX_DISTINCT = 'fact { status MIN(price) MAX(updated_at) COUNT(DISTINCT dim_id) }';
export const MIN_MAX_DISTINCT_SQL =
  'SELECT status, MIN(price) AS min_price, MAX(updated_at) AS max_updated_at, COUNT(DISTINCT dim_id) AS count_distinct_dim_id FROM fact GROUP BY status';

/** The 12 values of `fact.category`: the low-cardinality filter of scenario (b). */
export const CATEGORIES = [
  'books',
  'music',
  'garden',
  'toys',
  'grocery',
  'sports',
  'beauty',
  'health',
  'auto',
  'office',
  'pets',
  'electronics',
] as const;

/** The 4 values of `fact.status`: the GROUP BY key of scenario (c). */
export const STATUSES = ['new', 'paid', 'shipped', 'cancelled'] as const;

/** The 8 values of `dim.region`. */
export const REGIONS = [
  'north',
  'south',
  'east',
  'west',
  'central',
  'pacific',
  'mountain',
  'atlantic',
] as const;

export interface BenchDatasetOptions {
  /** Rows in `fact`; 1,000,000 by default. */
  factRows?: number;
  /** Rows in `dim`; 100,000 by default. */
  dimRows?: number;
  /** PRNG seed; the same seed always gives byte-identical data. */
  seed?: number;
}

export interface BenchDataset {
  database: TestDatabase;
  /** Size of both tables as header-less CSV (exactly the bytes loaded; `\N` for NULL). */
  csvBytes: number;
  factRows: number;
  dimRows: number;
}

const DDL = `
CREATE TABLE dim (
  id INT PRIMARY KEY,
  name VARCHAR(40) NOT NULL,
  region VARCHAR(16) NOT NULL,
  created DATE NOT NULL
) ENGINE=InnoDB;
CREATE TABLE fact (
  id BIGINT PRIMARY KEY,
  dim_id INT NOT NULL,
  qty INT NOT NULL,
  big BIGINT NOT NULL,
  amount DOUBLE NOT NULL,
  price DECIMAL(12,2) NOT NULL,
  category VARCHAR(12) NOT NULL,
  status VARCHAR(10) NOT NULL,
  note VARCHAR(200) NULL,
  day DATE NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  score DOUBLE NULL,
  KEY category (category),
  KEY dim_id (dim_id),
  CONSTRAINT fact_dim FOREIGN KEY (dim_id) REFERENCES dim (id)
) ENGINE=InnoDB;
`;

const FACT_COLUMNS =
  'id, dim_id, qty, big, amount, price, category, status, note, day, updated_at, score';
const DIM_COLUMNS = 'id, name, region, created';

/** Words for names and notes: plain ASCII with no comma, quote or backslash, so no CSV escaping. */
// biome-ignore format: a table of words reads better packed
const WORDS = [
  'amber', 'basil', 'cedar', 'delta', 'ember', 'fjord', 'gale', 'harbor', 'iris', 'juniper',
  'kelp', 'lumen', 'maple', 'nimbus', 'onyx', 'pebble', 'quartz', 'raven', 'sierra', 'tundra',
  'umber', 'vale', 'willow', 'xenon', 'yarrow', 'zephyr', 'order', 'shipped', 'late', 'gift',
  'fragile', 'express',
];

/** Rows per write: big enough that writeSync costs nothing, small enough to stay in cache. */
const CHUNK_ROWS = 50_000;
/** Variable-length notes are slices of one pseudo-random text: fast and still deterministic. */
const NOTE_POOL_CHARS = 8192;
const BIG_BASE = 9007199254740993n; // 2^53 + 1: the first integer a double cannot hold

const MS_PER_DAY = 86_400_000;

/** `YYYY-MM-DD` for `count` consecutive days from `start`, precomputed so rows need no Date. */
function dayStrings(start: string, count: number): string[] {
  const first = Date.parse(`${start}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) =>
    new Date(first + i * MS_PER_DAY).toISOString().slice(0, 10),
  );
}

function pad(value: number, width: number): string {
  return value.toString().padStart(width, '0');
}

function pick<T>(values: readonly T[], random: () => number): T {
  return values[Math.floor(random() * values.length)]!;
}

function notePool(random: () => number): string {
  let text = '';
  while (text.length < NOTE_POOL_CHARS + 200) text += `${pick(WORDS, random)} `;
  return text;
}

/** Writes CSV in chunks to `path`; returns the bytes written. */
function writeCsv(path: string, rows: number, row: (index: number) => string): number {
  const fd = openSync(path, 'w');
  let bytes = 0;
  try {
    for (let start = 0; start < rows; start += CHUNK_ROWS) {
      const end = Math.min(rows, start + CHUNK_ROWS);
      let chunk = '';
      for (let i = start; i < end; i++) chunk += row(i);
      bytes += writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

function writeDimCsv(path: string, dimRows: number, random: () => number): number {
  const created = dayStrings('2010-01-01', 3653);
  return writeCsv(path, dimRows, (i) => {
    const id = i + 1;
    const name = `${pick(WORDS, random)} ${pick(WORDS, random)} ${id}`;
    return `${id},${name},${pick(REGIONS, random)},${pick(created, random)}\n`;
  });
}

function writeFactCsv(
  path: string,
  factRows: number,
  dimRows: number,
  random: () => number,
): number {
  const days = dayStrings('2020-01-01', 1827);
  const pool = notePool(random);
  return writeCsv(path, factRows, (index) => {
    const id = index + 1;
    // Exactly factRows / dimRows children per dim row, spread evenly.
    const dimId = (id % dimRows) + 1;
    const qty = 1 + Math.floor(random() * 1000);
    // Every 10th row is above 2^53, to catch any lossy number conversion of BIGINT.
    const big =
      id % 10 === 0
        ? (BIG_BASE + BigInt(id)).toString()
        : Math.floor((random() * 2 - 1) * 2 ** 40).toString();
    const amount = Math.round(random() * 1e8) / 1e4;
    const cents = Math.floor(random() * 10_000_000);
    const price = `${Math.floor(cents / 100)}.${pad(cents % 100, 2)}`;
    const category = pick(CATEGORIES, random);
    const status = pick(STATUSES, random);
    let note = '\\N';
    if (random() >= 0.1) {
      const length = 20 + Math.floor(random() * 101);
      const offset = Math.floor(random() * NOTE_POOL_CHARS);
      // No leading or trailing space: PAD SPACE collations would make them invisible to `=`.
      note = `x${pool.slice(offset + 1, offset + length - 1)}x`;
    }
    const day = pick(days, random);
    const msOfDay = Math.floor(random() * MS_PER_DAY);
    const time = `${pad(Math.floor(msOfDay / 3_600_000), 2)}:${pad(Math.floor(msOfDay / 60_000) % 60, 2)}:${pad(Math.floor(msOfDay / 1000) % 60, 2)}.${pad(msOfDay % 1000, 3)}`;
    const score = random() < 0.2 ? '\\N' : String(Math.round(random() * 1e6) / 1e4);
    return `${id},${dimId},${qty},${big},${amount},${price},${category},${status},${note},${day},${day} ${time},${score}\n`;
  });
}

/**
 * Loads one CSV file with LOAD DATA LOCAL INFILE. LOCAL turns data errors into warnings (rows
 * are silently truncated or skipped), so any warning or a short row count fails the load.
 */
async function loadCsv(
  connection: mysql.Connection,
  path: string,
  table: string,
  columns: string,
  rows: number,
): Promise<void> {
  const [result] = await connection.query<ResultSetHeader>(
    `LOAD DATA LOCAL INFILE ? INTO TABLE \`${table}\` CHARACTER SET utf8mb4
     FIELDS TERMINATED BY ',' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' (${columns})`,
    [path],
  );
  if (result.affectedRows !== rows || result.warningStatus !== 0) {
    const [warnings] = await connection.query('SHOW WARNINGS LIMIT 5');
    throw new Error(
      `loading ${table}: ${result.affectedRows} of ${rows} rows, ${result.warningStatus} warnings: ${JSON.stringify(warnings)}`,
    );
  }
}

function progress(message: string): void {
  process.stderr.write(`[dataset] ${message}\n`);
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)}s`;
}

/**
 * Creates a fresh MariaDB database holding the benchmark's `dim` and `fact` tables, filled with
 * deterministic pseudo-random data. The data goes through CSV files in a temp folder and
 * LOAD DATA LOCAL INFILE, the fastest way in: 1M rows take seconds, not minutes of INSERTs.
 */
export async function createBenchDataset(
  admin: DatabaseAdmin,
  options: BenchDatasetOptions = {},
): Promise<BenchDataset> {
  const factRows = options.factRows ?? 1_000_000;
  const dimRows = options.dimRows ?? 100_000;
  const random = mulberry32(options.seed ?? 20240601);
  if (!Number.isInteger(factRows) || !Number.isInteger(dimRows) || factRows < 0 || dimRows < 1) {
    throw new Error(`bad dataset size: ${factRows} fact rows, ${dimRows} dim rows`);
  }

  const started = performance.now();
  const folder = mkdtempSync(join(tmpdir(), 'replix-bench-'));
  const dimPath = join(folder, 'dim.csv');
  const factPath = join(folder, 'fact.csv');
  let database: TestDatabase | undefined;
  try {
    const dimBytes = writeDimCsv(dimPath, dimRows, random);
    const factBytes = writeFactCsv(factPath, factRows, dimRows, random);
    const csvBytes = dimBytes + factBytes;
    progress(
      `wrote ${dimRows} dim + ${factRows} fact rows as CSV (${(csvBytes / 1e6).toFixed(1)} MB) in ${seconds(started)}`,
    );

    // MariaDB allows LOCAL INFILE by default; this makes sure a stricter build does too.
    await admin.exec('SET GLOBAL local_infile = 1');
    database = await admin.createDatabase(DDL);
    const ours = new Set([resolve(dimPath), resolve(factPath)]);
    const connection = await mysql.createConnection({
      uri: database.url,
      // The server asks for a file by name; only ever hand over the two we wrote.
      infileStreamFactory: (path: string) => {
        if (!ours.has(resolve(path))) throw new Error(`refusing LOCAL INFILE ${path}`);
        return createReadStream(path);
      },
    });
    try {
      const loading = performance.now();
      await loadCsv(connection, dimPath, 'dim', DIM_COLUMNS, dimRows);
      await loadCsv(connection, factPath, 'fact', FACT_COLUMNS, factRows);
      progress(`loaded into ${database.name} in ${seconds(loading)}`);
      // Fresh index statistics, so the baseline's query plans do not depend on timing.
      await connection.query('ANALYZE TABLE dim, fact');
    } finally {
      await connection.end();
    }
    progress(`dataset ready in ${seconds(started)}`);
    return { database, csvBytes, factRows, dimRows };
  } catch (error) {
    await database?.drop().catch(() => {});
    throw error;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
