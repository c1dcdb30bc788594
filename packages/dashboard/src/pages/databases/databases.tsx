// Being written: replaced by the page itself.
export function DatabasesPage() {
  return <p>DatabasesPage</p>;
}
