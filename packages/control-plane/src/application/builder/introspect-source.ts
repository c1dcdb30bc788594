import { connectionTarget, withSourceConnector } from '../source-access/connection-target.ts';
import type { SourceIntrospector } from './run-build.ts';

/** Reads the source schema of a database through its connection (and SSH tunnel, if any). */
export const introspectSource: SourceIntrospector = (database, connection, secrets) =>
  withSourceConnector(connectionTarget(connection, secrets, database.source_schema), (connector) =>
    connector.introspect(),
  );
