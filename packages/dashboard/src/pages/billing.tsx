// Being written: replaced by the page itself.
export function BillingPage() {
  return <p>BillingPage</p>;
}
