import type { Updateable } from 'kysely';

export interface FieldChanges<Table> {
  /** The columns to update. */
  readonly changes: Updateable<Table>;
  /** The API field names that changed, in order: the audit event's `changed` payload. */
  readonly changed: string[];
  /** Sets a column and names the API field it came from. */
  set<K extends keyof Updateable<Table>>(
    field: string,
    column: K,
    value: Updateable<Table>[K],
  ): void;
}

/** Collects a PATCH body's column changes together with the field names the audit records. */
export function fieldChanges<Table>(): FieldChanges<Table> {
  const changes = {} as Updateable<Table>;
  const changed: string[] = [];
  return {
    changes,
    changed,
    set(field, column, value) {
      changes[column] = value;
      changed.push(field);
    },
  };
}
