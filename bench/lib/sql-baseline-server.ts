/**
 * Throughput baseline 1: what a user would build instead of Replix, a minimal Fastify server
 * answering each benchmark scenario with the equivalent SQL on MariaDB through a mysql2 pool.
 * Deliberately plain: default mysql2 type casting, `reply.send(rows)`, no caching, no schemas.
 *
 *   node bench/lib/sql-baseline-server.ts --url mysql://root@127.0.0.1:3306/db --port 0
 *
 * Prints `{"event":"ready","url":"http://127.0.0.1:PORT"}` on stdout once listening.
 */
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import Fastify, { type FastifyReply } from 'fastify';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { MIN_MAX_DISTINCT_SQL } from './dataset.ts';
import { exitWithParent } from './exit-with-parent.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    port: { type: 'string', default: '0' },
  },
});
if (!values.url) {
  process.stderr.write('usage: sql-baseline-server.ts --url mysql://… [--port N]\n');
  process.exit(2);
}

const pool = mysql.createPool({ uri: values.url, connectionLimit: 10 });
const app = Fastify({ logger: false });

interface IdQuery {
  Querystring: { id?: string };
}

/** Parses `?id=`; answers 400 itself and returns undefined when it is not an integer. */
function idParam(id: string | undefined, reply: FastifyReply): number | undefined {
  const value = Number(id);
  if (id === undefined || id === '' || !Number.isSafeInteger(value)) {
    reply.code(400).send({ error: 'id must be an integer' });
    return undefined;
  }
  return value;
}

// (a) primary-key lookup of three fields.
app.get<IdQuery>('/a', async (request, reply) => {
  const id = idParam(request.query.id, reply);
  if (id === undefined) return reply;
  const [rows] = await pool.query('SELECT id, qty, amount FROM fact WHERE id = ?', [id]);
  return reply.send(rows);
});

// (b) filter on a non-key column, sorted, first page.
app.get<{ Querystring: { category?: string } }>('/b', async (request, reply) => {
  const category = request.query.category;
  if (!category) return reply.code(400).send({ error: 'category is required' });
  const [rows] = await pool.query(
    'SELECT * FROM fact WHERE category = ? ORDER BY amount DESC LIMIT 50',
    [category],
  );
  return reply.send(rows);
});

// (c) aggregate over the whole fact table, grouped by a low-cardinality column.
app.get('/c', async (_request, reply) => {
  const [rows] = await pool.query(
    'SELECT status, COUNT(*) AS count, SUM(qty) AS sum_qty FROM fact GROUP BY status',
  );
  return reply.send(rows);
});

// (e) as (b), sorted by a DECIMAL(12,2) column.
app.get<{ Querystring: { category?: string } }>('/e', async (request, reply) => {
  const category = request.query.category;
  if (!category) return reply.code(400).send({ error: 'category is required' });
  const [rows] = await pool.query(
    'SELECT * FROM fact WHERE category = ? ORDER BY price DESC LIMIT 50',
    [category],
  );
  return reply.send(rows);
});

// (f) as (c), summing a DECIMAL(12,2) column.
app.get('/f', async (_request, reply) => {
  const [rows] = await pool.query(
    'SELECT status, COUNT(*) AS count, SUM(price) AS sum_price FROM fact GROUP BY status',
  );
  return reply.send(rows);
});

// (g) a filter on a DECIMAL(12,2) column, counted and averaged.
app.get<{ Querystring: { floor?: string } }>('/g', async (request, reply) => {
  const floor = request.query.floor;
  if (!floor || !/^\d+(\.\d+)?$/.test(floor))
    return reply.code(400).send({ error: 'floor must be a decimal' });
  const [rows] = await pool.query(
    'SELECT COUNT(*) AS count, AVG(price) AS avg_price FROM fact WHERE price > ?',
    [floor],
  );
  return reply.send(rows);
});

// (h) the extremes of a DECIMAL and a timestamp and a distinct count, per status.
app.get('/h', async (_request, reply) => {
  const [rows] = await pool.query(MIN_MAX_DISTINCT_SQL);
  return reply.send(rows);
});

// (d) a parent row with its children embedded, the way a user would: two queries.
app.get<IdQuery>('/d', async (request, reply) => {
  const id = idParam(request.query.id, reply);
  if (id === undefined) return reply;
  const [dims] = await pool.query<RowDataPacket[]>('SELECT * FROM dim WHERE id = ?', [id]);
  if (dims.length === 0) return reply.code(404).send({ error: 'not found' });
  const [children] = await pool.query('SELECT * FROM fact WHERE dim_id = ? ORDER BY id', [id]);
  return reply.send({ ...dims[0], fact: children });
});

async function shutdown(): Promise<void> {
  try {
    await app.close();
    await pool.end();
  } finally {
    process.exit(0);
  }
}
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
exitWithParent(() => void shutdown());

await app.listen({ host: '127.0.0.1', port: Number(values.port) });
const { port } = app.server.address() as AddressInfo;
process.stdout.write(`${JSON.stringify({ event: 'ready', url: `http://127.0.0.1:${port}` })}\n`);
