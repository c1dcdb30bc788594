// Being written: replaced by the page itself.
export function ConfigTab() {
  return <p>ConfigTab</p>;
}
