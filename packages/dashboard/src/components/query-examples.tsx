// The demo's queries come from the dataset itself, so the playground offers exactly what
// `replix start` prints (and they keep working when the dataset changes).
import { DEMO_QUERIES } from '../../../cli/src/demo/demo-dataset.ts';

/** The database `replix start` makes over the demo shop (packages/cli/src/demo/demo-setup.ts). */
export function isDemoDatabase(database: { name: string }): boolean {
  return database.name === 'demo';
}

/** Example queries for the demo shop: each button puts its query in the editor. */
export function QueryExamples(props: { onPick: (query: string) => void }) {
  return (
    <div className="stack query-examples">
      <h3 id="query-examples-title">Examples for the demo shop</h3>
      <ul aria-labelledby="query-examples-title">
        {DEMO_QUERIES.map((query) => (
          <li key={query}>
            <button
              type="button"
              className="query-example"
              title="Put this query in the editor"
              onClick={() => props.onPick(query)}
            >
              <code>{query}</code>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
