/** The few SQL spellings the application queries need that differ between the two engines. */
export interface Dialect {
  readonly engine: 'mariadb' | 'postgres';
  /** An expression as text. */
  text(expression: string): string;
  /** Text sorted in code point order, as the instance sorts it. */
  codePoint(expression: string): string;
  /** A timestamp as canonical UTC text with microseconds. */
  timestamp(expression: string): string;
  /** `sum/count` as text, for comparing an AVG with the exact quotient. */
  fraction(sum: string, count: string): string;
  /** The first day of a month inside the sample's rental history. */
  readonly busyDay: string;
}

export const mariaDbDialect: Dialect = {
  engine: 'mariadb',
  text: (e) => `CAST(${e} AS CHAR CHARACTER SET utf8mb4)`,
  codePoint: (e) => `CAST(${e} AS CHAR CHARACTER SET utf8mb4) COLLATE utf8mb4_bin`,
  timestamp: (e) => `DATE_FORMAT(${e}, '%Y-%m-%dT%H:%i:%s.%fZ')`,
  fraction: (sum, count) => `CONCAT(${sum}, '/', ${count})`,
  busyDay: '2005-08-01',
};

export const postgresDialect: Dialect = {
  engine: 'postgres',
  text: (e) => `(${e})::text`,
  codePoint: (e) => `(${e})::text COLLATE "C"`,
  timestamp: (e) => `to_char(${e}, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
  fraction: (sum, count) => `(${sum})::text || '/' || (${count})::text`,
  busyDay: '2022-08-01',
};
