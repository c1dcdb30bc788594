// Pure data with no imports of Node modules: the dashboard bundles this file for the browser
// (`@replix/sources/dialect`).

/** The source backends, in the order they are offered. */
export const SOURCE_BACKENDS = ['mysql', 'postgres', 'mssql'] as const;

export type SourceBackend = (typeof SOURCE_BACKENDS)[number];

/** What change data capture keeps on a source (see `SourceDialect.replicationState`). */
export interface ReplicationState {
  readonly what: string;
  readonly namePrefix: string;
}

/** PostgreSQL's: a replication slot and a publication, both `replix_<replication id>`. */
export const POSTGRES_REPLICATION_STATE: ReplicationState = {
  what: 'replication slot and publication',
  namePrefix: 'replix_',
};

/** The backend a connection has when it names none (the API's default for `backend`). */
export const DEFAULT_SOURCE_BACKEND: SourceBackend = 'mysql';

/**
 * How a connection to the source uses TLS, as PostgreSQL's `sslmode` names it: `disable` (plain),
 * `prefer` (TLS when the server offers it, certificate not checked), `require` (TLS, certificate
 * not checked), `verify-full` (TLS, certificate chain and host name checked).
 */
export type SourceTlsMode = 'disable' | 'prefer' | 'require' | 'verify-full';

export const SOURCE_TLS_MODES: readonly SourceTlsMode[] = [
  'disable',
  'prefer',
  'require',
  'verify-full',
];

/** What the rest of Replix needs to know about a source backend without asking its connector. */
export interface SourceDialect {
  readonly backend: SourceBackend;
  /** The backend as people name it. */
  readonly label: string;
  /** The schemes of its source URLs; the first is the one Replix writes. */
  readonly urlSchemes: readonly [string, ...string[]];
  readonly defaultPort: number;
  /** The database a URL names for server-level work, when no source schema is chosen. */
  readonly serverDatabase: string;
  /**
   * Whether a source schema is one name, the database (MySQL, whose schemas are its
   * databases), rather than `<database>` or `<database>/<schema>`.
   */
  readonly databaseIsSchema: boolean;
  /** The schema read when a source schema names only the database. */
  readonly defaultSchema: string | undefined;
  /**
   * Connections log in to a database, so a connection test may name one (default
   * `serverDatabase`); `checksChangeCapture` when that database is also the one whose change
   * data capture the test checks. Undefined: connections log in to the server.
   */
  readonly loginDatabase: { readonly checksChangeCapture: boolean } | undefined;
  /**
   * What change data capture keeps on the source per database, to drop when the database
   * goes; undefined when it keeps nothing (MySQL's binlog clients and SQL Server's capture
   * instances leave no per-follower state). `what` in words; each follower's state is named
   * `namePrefix` + its replication id.
   */
  readonly replicationState: ReplicationState | undefined;
  /**
   * How the URL says how to use TLS: libpq's `sslmode` (with `sslrootcert`, `sslservername`),
   * or SQL Server's `encrypt` and `trustServerCertificate`.
   */
  readonly tlsUrlStyle: 'sslmode' | 'encrypt';
  /** The change log change data capture reads, as the connection test reports it. */
  readonly changeLog: {
    readonly name: string;
    /** What the test's `format` is: the log format, or PostgreSQL's `wal_level`. */
    readonly formatLabel: string;
    /** Whether the test reports a server id (MySQL's binlog replicas need their own). */
    readonly hasServerId: boolean;
  };
}

export const SOURCE_DIALECTS: { readonly [E in SourceBackend]: SourceDialect & { backend: E } } = {
  mysql: {
    backend: 'mysql',
    label: 'MySQL / MariaDB',
    urlSchemes: ['mysql'],
    defaultPort: 3306,
    serverDatabase: 'information_schema',
    databaseIsSchema: true,
    defaultSchema: undefined,
    loginDatabase: undefined,
    replicationState: undefined,
    tlsUrlStyle: 'sslmode',
    changeLog: { name: 'Binary log (replication)', formatLabel: 'Format', hasServerId: true },
  },
  postgres: {
    backend: 'postgres',
    label: 'PostgreSQL',
    urlSchemes: ['postgres', 'postgresql'],
    defaultPort: 5432,
    serverDatabase: 'postgres',
    databaseIsSchema: false,
    defaultSchema: 'public',
    loginDatabase: { checksChangeCapture: false },
    replicationState: POSTGRES_REPLICATION_STATE,
    tlsUrlStyle: 'sslmode',
    changeLog: { name: 'Logical replication', formatLabel: 'wal_level', hasServerId: false },
  },
  mssql: {
    backend: 'mssql',
    label: 'SQL Server',
    urlSchemes: ['mssql', 'sqlserver'],
    defaultPort: 1433,
    serverDatabase: 'master',
    databaseIsSchema: false,
    defaultSchema: 'dbo',
    loginDatabase: { checksChangeCapture: true },
    replicationState: undefined,
    tlsUrlStyle: 'encrypt',
    changeLog: { name: 'Change data capture', formatLabel: 'Format', hasServerId: false },
  },
};

export function isSourceBackend(name: string): name is SourceBackend {
  return (SOURCE_BACKENDS as readonly string[]).includes(name);
}

/**
 * The dialect of a stored backend name (`connections.backend`, which the API only ever writes
 * from `SOURCE_BACKENDS`); an unknown name is a bug, not a user error.
 */
export function sourceDialect(backend: string): SourceDialect {
  if (!isSourceBackend(backend)) throw new Error(`Unknown source backend "${backend}".`);
  return SOURCE_DIALECTS[backend];
}

/** The backend a source URL scheme names (`postgresql` too), or undefined. */
export function backendOfUrlScheme(scheme: string): SourceBackend | undefined {
  const lower = scheme.toLowerCase();
  return SOURCE_BACKENDS.find((backend) => SOURCE_DIALECTS[backend].urlSchemes.includes(lower));
}

/** The URL query parameters that say how to use TLS, in the dialect's style. */
export function tlsUrlParams(dialect: SourceDialect, mode: SourceTlsMode): Record<string, string> {
  if (dialect.tlsUrlStyle === 'sslmode') return { sslmode: mode };
  return {
    encrypt: String(mode !== 'disable'),
    trustServerCertificate: String(mode !== 'verify-full'),
  };
}
