// Being written: replaced by the page itself.
export function OverviewTab() {
  return <p>OverviewTab</p>;
}
