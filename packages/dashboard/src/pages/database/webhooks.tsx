// Being written: replaced by the page itself.
export function WebhooksTab() {
  return <p>WebhooksTab</p>;
}
