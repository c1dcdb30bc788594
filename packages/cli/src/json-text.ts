/**
 * JSON text helpers that never lose digits: the instance keeps every digit of BIGINT and
 * DECIMAL values in its JSON (`18446744073709551615`, `12.50`), which JSON.parse would round.
 */

/** A JSON number whose text a JavaScript number cannot reproduce; shown as written. */
export class RawNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * JSON.parse, except that numbers whose text differs from the parsed number's (big integers,
 * trailing decimal zeros) become RawNumber. Uses the reviver's source-text context (Node 21+).
 */
export function parseJsonLossless(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && String(value) !== context.source
      ? new RawNumber(context.source)
      : value,
  );
}

/**
 * Re-indents JSON text with two spaces, copying every token verbatim (numbers and string
 * escapes exactly as received). The text must be valid JSON (parse it first).
 */
export function prettyJson(text: string): string {
  let out = '';
  let depth = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end;
    } else if (char === '{' || char === '[') {
      let next = i + 1;
      while (/\s/.test(text[next] ?? '')) next++;
      if (text[next] === (char === '{' ? '}' : ']')) {
        out += char === '{' ? '{}' : '[]';
        i = next;
      } else {
        depth++;
        out += char + newline();
      }
    } else if (char === '}' || char === ']') {
      depth--;
      out += newline() + char;
    } else if (char === ',') {
      out += `,${newline()}`;
    } else if (char === ':') {
      out += ': ';
    } else if (!/\s/.test(char)) {
      out += char;
    }
  }
  return out;
}
