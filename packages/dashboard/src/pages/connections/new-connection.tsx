// Being written: replaced by the page itself.
export function NewConnectionPage() {
  return <p>NewConnectionPage</p>;
}
