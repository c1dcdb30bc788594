/** Bytes a group of 0..9 decimal digits takes in MySQL's packed DECIMAL format. */
const DIGIT_BYTES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
const GROUP = 9;

/** Bytes a DECIMAL(precision, scale) value takes in a binlog row image. */
export function packedDecimalSize(precision: number, scale: number): number {
  const integer = precision - scale;
  return (
    Math.floor(integer / GROUP) * 4 +
    (DIGIT_BYTES[integer % GROUP] as number) +
    Math.floor(scale / GROUP) * 4 +
    (DIGIT_BYTES[scale % GROUP] as number)
  );
}

/**
 * Decodes MySQL's packed binary DECIMAL: big-endian groups of nine digits in four bytes, with
 * shorter groups at the outer ends, the sign in the top bit of the first byte (set for
 * positive), and every byte inverted for a negative value. Returns the exact decimal text the
 * server prints (`-12.50`, `0.00`).
 */
export function decodePackedDecimal(raw: Uint8Array, precision: number, scale: number): string {
  const negative = ((raw[0] as number) & 0x80) === 0;
  const mask = negative ? 0xff : 0;
  let position = 0;
  const readGroup = (size: number): number => {
    let value = 0;
    for (let i = 0; i < size; i++) {
      let byte = (raw[position + i] as number) ^ mask;
      if (position + i === 0) byte ^= 0x80;
      value = value * 256 + byte;
    }
    position += size;
    return value;
  };
  const integerDigits = precision - scale;
  let integer = '';
  const leading = integerDigits % GROUP;
  if (leading > 0) integer += String(readGroup(DIGIT_BYTES[leading] as number));
  for (let i = 0; i < Math.floor(integerDigits / GROUP); i++) {
    integer += String(readGroup(4)).padStart(GROUP, '0');
  }
  integer = integer.replace(/^0+(?=\d)/, '') || '0';
  let fraction = '';
  for (let i = 0; i < Math.floor(scale / GROUP); i++)
    fraction += String(readGroup(4)).padStart(GROUP, '0');
  const trailing = scale % GROUP;
  if (trailing > 0)
    fraction += String(readGroup(DIGIT_BYTES[trailing] as number)).padStart(trailing, '0');
  const text = fraction ? `${integer}.${fraction}` : integer;
  return negative && /[1-9]/.test(text) ? `-${text}` : text;
}
