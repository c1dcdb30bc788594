/** Turns one non-null driver value into its column type's canonical form. */
export type ValueConverter = (value: unknown) => unknown;

/** Rewrites a driver row in place, value by value, into canonical forms. */
export type RowConverter = (row: unknown[]) => void;

const unchanged: RowConverter = () => {};

/**
 * Builds the row converter for one table read from one converter per column (null where the
 * driver's value already is canonical). Built once per read, so the per-row loop visits only the
 * columns that need work and never looks at type names.
 */
export function rowConverter(converters: readonly (ValueConverter | null)[]): RowConverter {
  const indexes: number[] = [];
  const functions: ValueConverter[] = [];
  converters.forEach((converter, index) => {
    if (converter === null) return;
    indexes.push(index);
    functions.push(converter);
  });
  const count = indexes.length;
  if (count === 0) return unchanged;
  return (row) => {
    for (let k = 0; k < count; k++) {
      const index = indexes[k]!;
      const value = row[index];
      if (value !== null && value !== undefined) row[index] = functions[k]!(value);
    }
  };
}
