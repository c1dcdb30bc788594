/**
 * Compares strings in Unicode code point order (the order UTF-8 bytes sort in), unlike `<` on
 * JS strings, which compares UTF-16 code units and puts U+E000..U+FFFF after astral characters.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Lift surrogates above U+E000..U+FFFF so that astral characters sort last.
    if (x >= 0xd800) x += x >= 0xe000 ? -0x800 : 0x2000;
    if (y >= 0xd800) y += y >= 0xe000 ? -0x800 : 0x2000;
    return x - y;
  }
  return a.length - b.length;
}
