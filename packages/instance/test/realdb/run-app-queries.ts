import type { TestInstance } from '../instance-helpers.ts';
import type { AppQuery } from './app-queries.ts';
import { answerDifferences } from './compare-answers.ts';
import type { RealSource } from './real-source.ts';
import { servedQuery } from './served-query.ts';
import { servedSchema, timestampColumns } from './served-schema.ts';

/** How many queries were compared, and each one whose answer differed from SQL's, and how. */
export interface AppQueryResults {
  compared: number;
  failures: string[];
}

/** Runs every query on the instance and its SQL on the source, and compares the answers. */
export async function runAppQueries(
  queries: readonly AppQuery[],
  source: RealSource,
  served: TestInstance,
): Promise<AppQueryResults> {
  const timestamps = timestampColumns(await servedSchema(served));
  const results: AppQueryResults = { compared: 0, failures: [] };
  for (const appQuery of queries) {
    results.compared += 1;
    const expected = await appQuery.expected(source);
    try {
      const answer = await servedQuery(served, appQuery.query, timestamps);
      const differences = answerDifferences(expected, answer.rows);
      if (differences.length > 0) {
        results.failures.push(`${appQuery.query}\n    ${differences.slice(0, 5).join('\n    ')}`);
      }
    } catch (error) {
      results.failures.push(`${appQuery.query}\n    ${(error as Error).message}`);
    }
  }
  return results;
}
