// Being written: replaced by the page itself.
export function QueryPage() {
  return <p>QueryPage</p>;
}
