// Being written: replaced by the page itself.
export function SettingsPage() {
  return <p>SettingsPage</p>;
}
