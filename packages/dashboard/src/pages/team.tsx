// Being written: replaced by the page itself.
export function TeamPage() {
  return <p>TeamPage</p>;
}
