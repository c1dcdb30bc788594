/**
 * The page's CSP nonce, which the control plane writes on the page's script tag with each answer
 * (docs/dashboard.md, "Security"): style elements the app injects (CodeMirror's) carry it, as
 * the policy allows no other inline style. Empty under Vite's dev server, which sends no policy.
 */
export function pageNonce(): string {
  return document.querySelector<HTMLScriptElement>('script[nonce]')?.nonce ?? '';
}
