import { type PostV1DatabasesData, postV1Databases } from '@replix/client';
import { SOURCE_DIALECTS, type SourceDialect } from '@replix/sources/dialect';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { type Account, useAccount } from '../../account.ts';
import { api, unwrap } from '../../api.ts';
import { WriteLink } from '../../components/connection-links.tsx';
import {
  type Connection,
  keys,
  schemaSuggestions,
  useConnections,
  useDatabases,
  useSavedConnectionTest,
} from '../../components/connection-queries.ts';
import { SelectField, TextField } from '../../components/fields.tsx';
import { GuardedButton } from '../../components/guarded-button.tsx';
import { Empty, ErrorNotice, Loading, Page, Panel, QueryState } from '../../components/page.tsx';
import { parseConfigText } from '../../components/schema-config-json.ts';
import { useConnectionSchemaSource } from '../../components/schema-source-preview.tsx';
import {
  type SyncErrors,
  type SyncSettings,
  SyncSettingsFields,
  validateSync,
} from '../../components/schema-sync-settings.tsx';
import {
  FIX_JSON,
  SchemaWorkbench,
  schemaConfigError,
} from '../../components/schema-workbench.tsx';
import { ReadOnlyNotice, useWriteBlock } from '../../components/write-access.tsx';
import '../connections-databases.css';

type CreateBody = PostV1DatabasesData['body'];
type Size = NonNullable<CreateBody['instanceSize']>;
type Region = NonNullable<CreateBody['region']>;

const SIZES: ReadonlyArray<{ value: Size; label: string }> = [
  { value: 'xs', label: 'xs: 0.25 vCPU, 512 MiB (1 compute unit)' },
  { value: 's', label: 's: 0.5 vCPU, 1 GiB (2 compute units)' },
  { value: 'm', label: 'm: 1 vCPU, 2 GiB (4 compute units)' },
  { value: 'l', label: 'l: 2 vCPU, 4 GiB (8 compute units)' },
  { value: 'xl', label: 'xl: 4 vCPU, 8 GiB (16 compute units)' },
];

/** How a source schema is written on a connection's engine. */
function schemaFormat(dialect: SourceDialect): string {
  return dialect.databaseIsSchema
    ? `The ${dialect.label} database to serve.`
    : `<database> or <database>/<schema> (schema default ${dialect.defaultSchema}).`;
}

function sizeOptions(account: Account | undefined) {
  const max = account?.limits.maxInstanceSize;
  const maxIndex = max ? SIZES.findIndex((size) => size.value === max) : SIZES.length - 1;
  return SIZES.map((size, index) => ({
    value: size.value,
    label: index > maxIndex ? `${size.label}: needs a larger plan` : size.label,
  }));
}

interface Draft {
  connectionId: string;
  name: string;
  sourceSchema: string;
  instanceSize: Size;
  /** Read replicas behind the endpoint, 1 … the plan's maxReplicas. */
  replicas: number;
  /** '' until chosen: the connection's default region. */
  region: '' | Region;
  configText: string;
  sync: SyncSettings;
}

function bodyOf(draft: Draft, config: Record<string, unknown>): CreateBody {
  const number = (text: string) => (text.trim() === '' ? undefined : Number(text));
  return {
    name: draft.name.trim(),
    connectionId: draft.connectionId,
    sourceSchema: draft.sourceSchema.trim(),
    schemaConfig: config,
    instanceSize: draft.instanceSize,
    replicas: draft.replicas,
    region: draft.region === '' ? undefined : draft.region,
    syncMode: draft.sync.syncMode === '' ? undefined : draft.sync.syncMode,
    syncInterval: number(draft.sync.syncInterval),
    safetyNet: number(draft.sync.safetyNet),
    logLevel: draft.sync.logLevel,
  };
}

/**
 * The source schema field's hint: the form the name takes, and the schemas the saved
 * connection's test (admins only) found its user can read, which the field also suggests.
 */
function schemaHint(
  connection: Connection | undefined,
  test: ReturnType<typeof useSavedConnectionTest>,
  suggestions: string[],
): string {
  if (!connection) return '';
  const format = schemaFormat(SOURCE_DIALECTS[connection.backend]);
  if (test.isLoading) return `${format} Testing the connection for its schemas…`;
  return suggestions.length > 0
    ? `${format} Schemas on this connection: ${suggestions.join(', ')}.`
    : format;
}

/**
 * Why CDC cannot run on this source, from the saved connection's test, in the words the API
 * gives as `syncModeReason` when Automatic picks poll.
 */
function cdcUnavailableNote(
  connection: Connection | undefined,
  test: ReturnType<typeof useSavedConnectionTest>,
): string | undefined {
  const changeLog = test.data?.ok ? test.data.binlog : undefined;
  if (!connection || !changeLog || changeLog.ready) return undefined;
  const logName = SOURCE_DIALECTS[connection.backend].changeLog.name.toLowerCase();
  const why = changeLog.logBin
    ? `the source is not set up for change data capture (${changeLog.issues.join(' ')})`
    : `the source’s ${logName} is off`;
  return `Poll: ${why}, so CDC is not available.`;
}

/** A saved connection whose test failed cannot serve a database: say so, and why. */
function ConnectionTestProblem(props: {
  connection: Connection | undefined;
  test: ReturnType<typeof useSavedConnectionTest>;
}) {
  const { connection, test } = props;
  if (!connection) return null;
  if (test.error) {
    return <ErrorNotice error={test.error} title="Could not test the connection" />;
  }
  if (!test.data || test.data.ok) return null;
  return (
    <div className="notice notice-warn" role="status">
      <strong>The connection test failed: </strong>
      {test.data.error ?? 'the source did not answer.'} Fix the{' '}
      <Link to={`/connections/${connection.id}`}>connection</Link> before provisioning a database on
      it.
    </div>
  );
}

function NewDatabaseForm(props: { connections: Connection[]; account: Account | undefined }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [params] = useSearchParams();
  const databases = useDatabases();
  const blocked = useWriteBlock();
  const requested = params.get('connection');
  const [draft, setDraft] = useState<Draft>(() => ({
    connectionId: props.connections.some((c) => c.id === requested)
      ? (requested ?? '')
      : (props.connections[0]?.id ?? ''),
    name: '',
    sourceSchema: '',
    instanceSize: 'xs',
    replicas: 1,
    region: '',
    configText: '{}\n',
    sync: { syncMode: '', syncInterval: '', logLevel: 'info', safetyNet: '' },
  }));
  const [errors, setErrors] = useState<{ name?: string; sourceSchema?: string }>({});
  const [syncErrors, setSyncErrors] = useState<SyncErrors>({});
  const connection = props.connections.find((c) => c.id === draft.connectionId);
  // The saved connection's test (admins only) suggests the schemas it can read.
  const test = useSavedConnectionTest(draft.connectionId, !blocked);
  const suggestions = schemaSuggestions(draft.connectionId, test.data, databases.data);
  const source = useConnectionSchemaSource(connection, draft.sourceSchema);
  const schemaListId = useId();
  const pollMinimum = props.account?.limits.pollModeMinSyncInterval;
  const parsed = parseConfigText(draft.configText);

  const create = useMutation({
    mutationFn: (body: CreateBody) => unwrap(postV1Databases({ client: api, body })),
    onSuccess: (database) => {
      queryClient.setQueryData(keys.database(database.id), database);
      void queryClient.invalidateQueries({ queryKey: keys.databases });
      navigate(`/databases/${database.id}`);
    },
  });
  const configError = schemaConfigError(create.error);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: typeof errors = {};
    if (!draft.name.trim()) found.name = 'Give the database a name.';
    if (!draft.sourceSchema.trim()) found.sourceSchema = 'Name the source schema to serve.';
    const foundSync = validateSync(draft.sync, pollMinimum);
    setErrors(found);
    setSyncErrors(foundSync);
    if (!parsed.ok || Object.keys(found).length > 0 || Object.keys(foundSync).length > 0) return;
    create.mutate(bodyOf(draft, parsed.value));
  };
  const multiRegion = props.account?.limits.multiRegion ?? false;
  const createBlocked = blocked ?? (parsed.ok ? undefined : FIX_JSON);

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <ReadOnlyNotice reason={blocked} />
      <Panel title="Source">
        <div className="form-grid">
          <SelectField
            label="Connection"
            value={draft.connectionId}
            onChange={(event) => setDraft({ ...draft, connectionId: event.target.value })}
            options={props.connections.map((c) => ({
              value: c.id,
              label: `${c.name} (${SOURCE_DIALECTS[c.backend].label}, ${c.host})`,
            }))}
            hint={<Link to={`/connections/${draft.connectionId}`}>About this connection</Link>}
          />
          <TextField
            label="Name"
            value={draft.name}
            onChange={(event) => setDraft({ ...draft, name: event.target.value })}
            error={errors.name}
            maxLength={100}
            autoComplete="off"
            disabled={Boolean(blocked)}
          />
          <TextField
            label="Source schema"
            value={draft.sourceSchema}
            onChange={(event) => setDraft({ ...draft, sourceSchema: event.target.value })}
            error={errors.sourceSchema}
            list={schemaListId}
            autoComplete="off"
            spellCheck={false}
            disabled={Boolean(blocked)}
            hint={schemaHint(connection, test, suggestions)}
          />
          <datalist id={schemaListId}>
            {suggestions.map((schema) => (
              <option key={schema} value={schema} />
            ))}
          </datalist>
        </div>
        <ConnectionTestProblem connection={connection} test={test} />
      </Panel>
      <Panel title="Instance">
        <div className="form-grid">
          <SelectField
            label="Instance size"
            value={draft.instanceSize}
            onChange={(event) => setDraft({ ...draft, instanceSize: event.target.value as Size })}
            options={sizeOptions(props.account)}
            hint="Change it later with the resize action."
            disabled={Boolean(blocked)}
          />
          <SelectField
            label="Read replicas"
            value={String(draft.replicas)}
            onChange={(event) => setDraft({ ...draft, replicas: Number(event.target.value) })}
            options={Array.from({ length: props.account?.limits.maxReplicas ?? 1 }, (_, index) => ({
              value: String(index + 1),
              label: String(index + 1),
            }))}
            hint="Instances of this size behind the one endpoint, each following the source; each counts its size's compute units."
            disabled={Boolean(blocked)}
          />
          <SelectField
            label="Region"
            value={draft.region}
            onChange={(event) =>
              setDraft({ ...draft, region: event.target.value as Draft['region'] })
            }
            options={[
              {
                value: '',
                label: `The connection’s default (${connection?.defaultRegion ?? 'eu-west-1'})`,
              },
              { value: 'eu-west-1', label: 'eu-west-1' },
              {
                value: 'us-east-1',
                label: multiRegion ? 'us-east-1' : 'us-east-1: needs the Teams plan or above',
              },
            ]}
            hint="Fixed after creation."
            disabled={Boolean(blocked)}
          />
        </div>
        <SyncSettingsFields
          settings={draft.sync}
          onChange={(change) => setDraft({ ...draft, sync: { ...draft.sync, ...change } })}
          errors={syncErrors}
          pollMinimum={pollMinimum}
          defaults
          disabled={Boolean(blocked)}
          modeNote={cdcUnavailableNote(connection, test)}
        />
      </Panel>
      <Panel title="Schema config">
        <SchemaWorkbench
          text={draft.configText}
          onChange={(configText) => setDraft((current) => ({ ...current, configText }))}
          parsed={parsed}
          serverError={configError}
          readOnlyReason={blocked}
          source={source}
        />
      </Panel>
      {create.error && !configError && (
        <ErrorNotice error={create.error} title="Could not create the database" />
      )}
      <p className="muted conn-note">
        The database starts as a draft: nothing runs until you provision it from its Overview tab.
      </p>
      <div className="row">
        <GuardedButton
          type="submit"
          className="button button-primary"
          disabledReason={createBlocked}
          busy={create.isPending}
        >
          {create.isPending ? 'Creating…' : 'Create database'}
        </GuardedButton>
        <Link className="button" to="/databases">
          Cancel
        </Link>
      </div>
    </form>
  );
}

/** A new database: a connection, the schema to serve, its size and sync, its schema config. */
export function NewDatabasePage() {
  const connections = useConnections();
  const { data: account } = useAccount();
  return (
    <Page title="New database">
      <p className="muted conn-lead">
        A database serves one schema of a connection through the Replix query API.{' '}
        <Link to="/databases">Back to databases</Link>
      </p>
      <QueryState query={connections} what="connections" />
      {connections.data?.length === 0 && (
        <Empty title="Add a connection first">
          <p>
            A database reads its tables from a source server, so Replix needs a connection (the
            server’s address and credentials) before it can create one.
          </p>
          <WriteLink to="/connections/new" primary>
            New connection
          </WriteLink>
        </Empty>
      )}
      {connections.data && connections.data.length > 0 && !account && (
        <Loading what="your account" />
      )}
      {connections.data && connections.data.length > 0 && account && (
        <NewDatabaseForm connections={connections.data} account={account} />
      )}
    </Page>
  );
}
