import { buildRowsOf, ownedBuild } from '../../../adapters/store/build-store.ts';
import { logLinesAfter } from '../../../adapters/store/log-lines.ts';
import { ownedDatabase } from '../../../adapters/store/tenancy.ts';
import type { ApiContext } from '../../../api/context.ts';
import { buildResource } from './builds-schemas.ts';

/** Lines per page of a build log. */
const LOG_PAGE = 500;
const FINISHED = new Set(['succeeded', 'failed']);

type Context = Pick<ApiContext, 'db'>;

/** A database's builds, newest first. */
export async function listBuilds({ db }: Context, accountId: string, databaseId: string) {
  const database = await ownedDatabase(db, accountId, databaseId);
  return (await buildRowsOf(db, database.id)).map(buildResource);
}

export async function getBuild({ db }: Context, accountId: string, id: string) {
  return buildResource(await ownedBuild(db, accountId, id));
}

/** A page of a build's log after `nextToken` (spec §2 LogsResponse). */
export async function readBuildLog(
  { db }: Context,
  accountId: string,
  id: string,
  nextToken: string | undefined,
) {
  // The status is read before the lines: a build writes its last line before it finishes,
  // so when it had finished by then, the lines read next are all there will be.
  const build = await ownedBuild(db, accountId, id);
  const after = Number(nextToken ?? 0);
  const rows = await logLinesAfter(db, build.id, String(after), LOG_PAGE);
  const last = rows.at(-1);
  const finished = FINISHED.has(build.status);
  return {
    lines: rows.map((row) => ({ message: row.message, timestamp: Number(row.ts) })),
    nextToken: last ? String(last.id) : (nextToken ?? (finished ? null : '0')),
    done: finished && rows.length < LOG_PAGE,
  };
}
