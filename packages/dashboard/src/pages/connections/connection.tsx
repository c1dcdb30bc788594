// Being written: replaced by the page itself.
export function ConnectionPage() {
  return <p>ConnectionPage</p>;
}
