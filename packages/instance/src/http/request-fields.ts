/**
 * The request fields a query reads, taken from the request's raw header lines in one pass.
 * Reading `request.headers` instead makes Node build an object of every field the client sent
 * (each name lowercased, each checked against its list of known fields), on every request, for
 * the three or four a query looks at. Duplicates are kept as Node keeps them: the first
 * `Authorization`, the others joined with ", ".
 */
export interface QueryRequestFields {
  authorization: string | undefined;
  accept: string | undefined;
  ifNoneMatch: string | undefined;
  origin: string | undefined;
}

/** `request.rawHeaders`' fields a query reads (`QueryRequestFields`). */
export function queryRequestFields(rawHeaders: readonly string[]): QueryRequestFields {
  const fields: QueryRequestFields = {
    authorization: undefined,
    accept: undefined,
    ifNoneMatch: undefined,
    origin: undefined,
  };
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    // Only names of the lengths read are lowercased: most lines are skipped on their length.
    const length = name.length;
    if (length !== 6 && length !== 13) continue;
    const value = rawHeaders[i + 1] as string;
    switch (name.toLowerCase()) {
      case 'authorization':
        fields.authorization ??= value;
        break;
      case 'accept':
        fields.accept = joined(fields.accept, value);
        break;
      case 'if-none-match':
        fields.ifNoneMatch = joined(fields.ifNoneMatch, value);
        break;
      case 'origin':
        fields.origin = joined(fields.origin, value);
        break;
    }
  }
  return fields;
}

function joined(held: string | undefined, value: string): string {
  return held === undefined ? value : `${held}, ${value}`;
}
