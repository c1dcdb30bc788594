// Being written: replaced by the page itself.
export function BuildsTab() {
  return <p>BuildsTab</p>;
}
