/** What the user typed as a second factor, as the API takes it: six digits are a TOTP code. */
export function secondFactorBody(text: string): { code: string } | { recoveryCode: string } {
  const trimmed = text.trim();
  return /^\d{6}$/.test(trimmed) ? { code: trimmed } : { recoveryCode: trimmed };
}
