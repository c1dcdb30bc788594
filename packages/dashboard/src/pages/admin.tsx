// Being written: replaced by the page itself.
export function AdminPage() {
  return <p>AdminPage</p>;
}
