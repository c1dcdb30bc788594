import { type PatchV1DatabasesByIdData, patchV1DatabasesById } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useAccount } from '../../account.ts';
import { api, unwrap } from '../../api.ts';
import {
  type DatabaseRecord,
  keys,
  useSchemaIntrospection,
} from '../../components/connection-queries.ts';
import { TextField } from '../../components/fields.tsx';
import { GuardedButton } from '../../components/guarded-button.tsx';
import { ErrorNotice, Panel } from '../../components/page.tsx';
import { formatConfig, parseConfigText } from '../../components/schema-config-json.ts';
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
import { useDatabase } from './database-layout.tsx';

interface ConfigForm {
  sourceSchema: string;
  configText: string;
  sync: SyncSettings;
}

function formOf(database: DatabaseRecord): ConfigForm {
  return {
    sourceSchema: database.sourceSchema,
    configText: formatConfig(database.schemaConfig),
    sync: {
      syncMode: database.syncMode as SyncSettings['syncMode'],
      syncInterval: String(database.syncInterval),
      logLevel: database.logLevel as SyncSettings['logLevel'],
      safetyNet: String(database.safetyNet),
    },
  };
}

type PatchBody = PatchV1DatabasesByIdData['body'];

/** Only the fields that differ from the saved database (the audit log names them). */
function changesOf(form: ConfigForm, database: DatabaseRecord): PatchBody | undefined {
  const parsed = parseConfigText(form.configText);
  if (!parsed.ok) return undefined;
  const body: PatchBody = {};
  if (form.sourceSchema.trim() !== database.sourceSchema)
    body.sourceSchema = form.sourceSchema.trim();
  if (JSON.stringify(parsed.value) !== JSON.stringify(database.schemaConfig)) {
    body.schemaConfig = parsed.value;
  }
  if (form.sync.syncMode !== database.syncMode && form.sync.syncMode !== '') {
    body.syncMode = form.sync.syncMode;
  }
  if (Number(form.sync.syncInterval) !== database.syncInterval) {
    body.syncInterval = Number(form.sync.syncInterval);
  }
  if (form.sync.logLevel !== database.logLevel) body.logLevel = form.sync.logLevel;
  if (Number(form.sync.safetyNet) !== database.safetyNet)
    body.safetyNet = Number(form.sync.safetyNet);
  return body;
}

const LIVE_STATUSES = new Set(['running', 'paused', 'failed', 'building', 'deploying']);

/** What it takes for saved changes to reach the instance (lifecycle.md: pending changes). */
function ApplyNotice(props: { database: DatabaseRecord; saved?: PatchBody }) {
  const { status } = props.database;
  const saved = props.saved;
  if (!LIVE_STATUSES.has(status)) {
    return (
      <p className="notice notice-info">
        Nothing runs yet ({status}): the saved config is used when the database is provisioned from
        the Overview tab.
      </p>
    );
  }
  const schemaChanged = saved ? 'schemaConfig' in saved || 'sourceSchema' in saved : true;
  const settingsChanged = saved
    ? ['syncMode', 'syncInterval', 'logLevel', 'safetyNet'].some((key) => key in saved)
    : true;
  return (
    <p
      className={`notice ${saved ? 'notice-warn' : 'notice-info'}`}
      role={saved ? 'status' : undefined}
    >
      {saved ? 'Saved. ' : ''}Saving does not touch the running instance: changes stay pending until
      applied from the Overview tab.
      {schemaChanged && ' A changed schema config or source schema needs a rebuild.'}
      {settingsChanged &&
        ' Changed sync or log settings need a reconfigure (a rebuild applies them too).'}
    </p>
  );
}

/** The database's source schema, schema config and sync settings, saved with one PATCH. */
export function ConfigTab() {
  const database = useDatabase();
  const queryClient = useQueryClient();
  const { data: account } = useAccount();
  const blocked = useWriteBlock();
  const [form, setForm] = useState<ConfigForm>(() => formOf(database));
  const [syncErrors, setSyncErrors] = useState<SyncErrors>({});
  const [schemaError, setSchemaError] = useState<string | undefined>();
  const introspection = useSchemaIntrospection(database.id);
  const pollMinimum = account?.limits.pollModeMinSyncInterval;

  const save = useMutation({
    mutationFn: (body: PatchBody) =>
      unwrap(patchV1DatabasesById({ client: api, path: { id: database.id }, body })),
    onSuccess: (saved, body) => {
      queryClient.setQueryData(keys.database(saved.id), saved);
      void queryClient.invalidateQueries({ queryKey: keys.databases });
      if ('sourceSchema' in body) {
        void queryClient.invalidateQueries({ queryKey: keys.schema(saved.id) });
      }
      setForm(formOf(saved));
    },
  });

  const parsed = parseConfigText(form.configText);
  const changes = changesOf(form, database);
  const nothingChanged = changes !== undefined && Object.keys(changes).length === 0;
  // A config problem belongs under the editor; anything else by the save button.
  const configError = schemaConfigError(save.error);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateSync(form.sync, pollMinimum);
    setSyncErrors(found);
    const schema = form.sourceSchema.trim() ? undefined : 'Name the source schema.';
    setSchemaError(schema);
    if (!changes || schema || Object.keys(found).length > 0 || nothingChanged) return;
    save.mutate(changes);
  };
  const saveBlocked =
    blocked ?? (!parsed.ok ? FIX_JSON : nothingChanged ? 'Nothing has changed yet.' : undefined);

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <ReadOnlyNotice reason={blocked} />
      <ApplyNotice database={database} saved={save.isSuccess ? save.variables : undefined} />
      <Panel title="Source schema">
        <div className="form-grid">
          <TextField
            label="Source schema"
            value={form.sourceSchema}
            onChange={(event) => setForm({ ...form, sourceSchema: event.target.value })}
            error={schemaError}
            readOnly={Boolean(blocked)}
            hint="MySQL: the database. PostgreSQL and SQL Server: <database> or <database>/<schema>."
          />
        </div>
      </Panel>
      <Panel title="Schema config">
        <SchemaWorkbench
          text={form.configText}
          onChange={(configText) => setForm((current) => ({ ...current, configText }))}
          parsed={parsed}
          serverError={configError}
          readOnlyReason={blocked}
          source={{
            query: introspection,
            note: (
              <>
                Read live from <code>{database.sourceSchema}</code> on the source.
              </>
            ),
          }}
        />
      </Panel>
      <Panel title="Sync and logging">
        <SyncSettingsFields
          settings={form.sync}
          onChange={(change) => setForm({ ...form, sync: { ...form.sync, ...change } })}
          errors={syncErrors}
          pollMinimum={pollMinimum}
          disabled={Boolean(blocked)}
          modeNote={database.syncModeReason}
        />
      </Panel>
      {save.error && !configError && <ErrorNotice error={save.error} title="Could not save" />}
      <div className="row">
        <GuardedButton
          type="submit"
          className="button button-primary"
          disabledReason={saveBlocked}
          busy={save.isPending}
        >
          {save.isPending ? 'Saving…' : 'Save changes'}
        </GuardedButton>
        <button
          type="button"
          className="button"
          disabled={nothingChanged || Boolean(blocked)}
          onClick={() => {
            setForm(formOf(database));
            save.reset();
          }}
        >
          Discard changes
        </button>
      </div>
    </form>
  );
}
