import type { ElementType, SourceColumn } from '@replix/engine';
import { SourceError } from '../errors.ts';
import type { ValueConverter } from '../row-converter.ts';
import { parseDateText, parseTimeText } from '../temporal-text.ts';
import { type PostgresArray, parsePostgresArray } from './postgres-array.ts';
import { isBlankPadded, withoutPadding } from './postgres-blank-padding.ts';

/** One element's text to its JSON text, following the type table. */
type ElementJson = (text: string) => string;

const NOT_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);

const TIMESTAMP =
  /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?( BC)?$/;

/**
 * A timestamp element (`2022-02-15 09:57:20.123456+00`, printed in UTC by the session's
 * settings) as ISO 8601 UTC with `digits` fraction digits, or null for `±infinity`.
 */
export function timestampElementIso(text: string, digits: 3 | 6): string | null {
  if (text === 'infinity' || text === '-infinity') return null;
  const match = TIMESTAMP.exec(text);
  if (!match) {
    throw new SourceError(
      'source_value_invalid',
      `Unexpected timestamp text from the source: "${text}".`,
    );
  }
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh = '0', om = '0', os = '0', bc] = match;
  const offset = (Number(oh) * 3600 + Number(om) * 60 + Number(os)) * (sign === '-' ? -1 : 1);
  const date = new Date(0);
  // 1 BC is year 0; setUTCFullYear, unlike Date.UTC, takes years 0..99 as they are.
  date.setUTCFullYear(bc ? 1 - Number(y) : Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s) - offset, 0);
  const iso = date.toISOString(); // …:SS.000Z
  return `${iso.slice(0, -4)}${fraction.padEnd(6, '0').slice(0, digits)}Z`;
}

/** Fraction digits of a timestamp element: 3 for a declared precision of 0..3, else 6. */
function timestampDigits(elementSourceType: string): 3 | 6 {
  const declared = /\(\s*(\d+)\s*\)/.exec(elementSourceType)?.[1];
  return declared !== undefined && Number(declared) <= 3 ? 3 : 6;
}

/** The element converter for elements of `type`, declared as `elementSourceType`. */
export function elementJson(type: ElementType, elementSourceType: string): ElementJson {
  switch (type) {
    case 'int':
    case 'bigint':
      return (text) => text; // PostgreSQL's integer text is JSON's
    case 'float':
      return (text) => {
        const value = Number(text);
        return Number.isFinite(value) ? String(value) : 'null';
      };
    case 'decimal':
      return (text) => (NOT_FINITE.has(text) ? 'null' : text);
    case 'boolean':
      return (text) => (text === 't' || text === 'true' || text === '1' ? 'true' : 'false');
    case 'string':
      return isBlankPadded(elementSourceType)
        ? (text) => JSON.stringify(withoutPadding(text))
        : (text) => JSON.stringify(text);
    case 'json':
      return (text) => JSON.stringify(text);
    case 'date':
      return (text) => {
        const date = parseDateText(text);
        return date === null ? 'null' : `"${date}"`;
      };
    case 'timestamp': {
      const digits = timestampDigits(elementSourceType);
      return (text) => {
        const iso = timestampElementIso(text, digits);
        return iso === null ? 'null' : `"${iso}"`;
      };
    }
    case 'time':
      // Six decimals at most, as the source has: no binary noise from adding the fraction.
      return (text) => String(Number(parseTimeText(text).toFixed(6)));
    case 'binary':
      return (text) => `"${text.slice(2)}"`; // `\x` hex
  }
}

function arrayJson(array: PostgresArray, element: ElementJson): string {
  let json = '[';
  for (let i = 0; i < array.length; i++) {
    if (i > 0) json += ',';
    const item = array[i];
    if (item === null || item === undefined) json += 'null';
    else if (typeof item === 'string') json += element(item);
    else json += arrayJson(item, element);
  }
  return `${json}]`;
}

/**
 * The converter of an `array` column: PostgreSQL's array text to the JSON array text the engine
 * serves (see `ColumnType`). Element details come from the declared type (`character(3)[]`,
 * `timestamp(3) with time zone[]`, `box[]`, whose elements are separated by `;`).
 */
export function postgresArrayConverter(column: SourceColumn): ValueConverter {
  const elementSourceType = column.sourceType.replace(/(\s*\[\d*\])+$/, '').trim();
  const element = elementJson(column.elementType ?? 'string', elementSourceType);
  const delimiter = elementSourceType.toLowerCase() === 'box' ? ';' : ',';
  return (value) => arrayJson(parsePostgresArray(String(value), delimiter), element);
}
