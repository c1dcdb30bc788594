// Being written: replaced by the page itself.
export function KeysTab() {
  return <p>KeysTab</p>;
}
