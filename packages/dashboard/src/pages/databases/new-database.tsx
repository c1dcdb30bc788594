// Being written: replaced by the page itself.
export function NewDatabasePage() {
  return <p>NewDatabasePage</p>;
}
