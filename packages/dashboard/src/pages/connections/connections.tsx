// Being written: replaced by the page itself.
export function ConnectionsPage() {
  return <p>ConnectionsPage</p>;
}
