import { loadPagila } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { postgresDialect } from './realdb/dialect.ts';
import { writeToPagila } from './realdb/pagila-writes.ts';
import { postgresRealSource } from './realdb/postgres-real-source.ts';
import { describeSampleDatabase } from './realdb/sample-suite.ts';

describeSampleDatabase({
  name: 'Pagila',
  engine: 'PostgreSQL',
  createDatabase: () => testPostgres().createDatabase(),
  load: loadPagila,
  connect: postgresRealSource,
  dialect: postgresDialect,
  write: writeToPagila,
  tableCount: 15,
  views: [
    ['actor_info', ['actor_id']],
    ['rental_by_category', ['category']],
  ],
  // Pagila creates the materialized view WITH NO DATA; an application refreshes it first.
  prepareViews: (source) => source.exec('REFRESH MATERIALIZED VIEW rental_by_category'),
});
