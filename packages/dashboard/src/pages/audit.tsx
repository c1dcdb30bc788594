// Being written: replaced by the page itself.
export function AuditPage() {
  return <p>AuditPage</p>;
}
