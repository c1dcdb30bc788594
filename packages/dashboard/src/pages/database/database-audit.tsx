// Being written: replaced by the page itself.
export function DatabaseAuditTab() {
  return <p>DatabaseAuditTab</p>;
}
