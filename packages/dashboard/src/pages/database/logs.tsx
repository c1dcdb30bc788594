// Being written: replaced by the page itself.
export function LogsTab() {
  return <p>LogsTab</p>;
}
