import type { Selectable } from 'kysely';
import { Type } from 'typebox';
import type { ConnectionTable } from '../../adapters/store/schema.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { connectionTarget, withSourceConnector } from './connection-target.ts';
import { type SchemaIntrospection, schemaIntrospection } from './schema-introspection.ts';

/** The schema introspection response, shared by every route that reads a source schema. */
export const SchemaIntrospectionResponse = Type.Object(
  {
    tables: Type.Array(
      Type.Object({
        name: Type.String(),
        kind: Type.Union(
          [Type.Literal('table'), Type.Literal('view'), Type.Literal('materialized_view')],
          {
            description:
              'A view or materialized view has no change stream: it is served only when the config names it, and re-read every `refresh_interval` seconds.',
          },
        ),
        columns: Type.Array(
          Type.Object({
            name: Type.String(),
            type: Type.String({ description: 'The source type, e.g. `varchar(50)`.' }),
            nullable: Type.Boolean(),
            key: Type.String({ description: '`PRI`, `UNI`, `MUL` or empty, as MySQL shows keys.' }),
          }),
        ),
        relations: Type.Array(
          Type.Object({
            column: Type.String(),
            derivedName: Type.String({
              description: 'The forward relation name the instance API will use.',
            }),
            referencedTable: Type.String(),
            referencedColumn: Type.String(),
            constraintName: Type.String(),
          }),
        ),
        reverseRelations: Type.Array(
          Type.Object({
            name: Type.String({
              description:
                'The to-many relation name the instance API will use (the referencing table, or `<table>_by_<columns>` on a collision).',
            }),
            fromTable: Type.String({
              description: 'The table whose foreign key references this one.',
            }),
            fromColumns: Type.Array(Type.String(), { description: "The foreign key's columns." }),
            constraintName: Type.String(),
          }),
          {
            description:
              "The relations other tables' foreign keys give this one, selected as `table { name { … } }`.",
          },
        ),
      }),
    ),
  },
  { $id: 'SchemaIntrospection' },
);

/**
 * Reads a source schema live through a connection (its tunnel and TLS mode included) and maps
 * it to the introspection response. An unreachable source, refused credentials or a missing
 * schema are 502 `source_unavailable` with the connector's safe message.
 */
export function readSourceSchema(
  connection: Selectable<ConnectionTable>,
  secrets: SecretBox,
  sourceSchema: string,
): Promise<SchemaIntrospection> {
  const target = connectionTarget(connection, secrets, sourceSchema);
  return withSourceConnector(target, async (connector) =>
    schemaIntrospection(await connector.introspect()),
  );
}
