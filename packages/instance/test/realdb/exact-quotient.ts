/**
 * Whether `served` (decimal digits) is the quotient `fraction` (`"<decimal>/<integer>"`, as
 * the source computes SUM and COUNT) correctly rounded to the served value's own scale, and
 * that scale is at least the sum's: an AVG of DECIMAL must be exact to the digits it shows.
 */
export function isExactQuotient(served: string, fraction: string): boolean {
  const [sumText = '', countText = ''] = fraction.split('/');
  const servedScale = scaleOf(served);
  if (servedScale < scaleOf(sumText) || countText === '0') return false;
  // served = s / 10^k; exact = sum / count; |served - exact| <= 1/2 unit of the k-th decimal.
  const k = BigInt(servedScale);
  const s = unscaled(served);
  const sum = unscaled(sumText) * 10n ** (k - BigInt(scaleOf(sumText)));
  const count = BigInt(countText);
  const error = s * count - sum; // in units of 10^-k / count
  const absolute = error < 0n ? -error : error;
  return 2n * absolute <= count;
}

function scaleOf(text: string): number {
  const point = text.indexOf('.');
  return point < 0 ? 0 : text.length - point - 1;
}

function unscaled(text: string): bigint {
  return BigInt(text.replace('.', ''));
}
