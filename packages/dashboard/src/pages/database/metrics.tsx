// Being written: replaced by the page itself.
export function MetricsTab() {
  return <p>MetricsTab</p>;
}
