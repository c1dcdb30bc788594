import { SOURCE_BACKENDS, SOURCE_DIALECTS, type SourceDialect } from '@replix/sources/dialect';
import type { Account } from '../account.ts';
import type { ConnectionDraft, FieldErrors } from './connection-draft.ts';
import type { Backend, Connection } from './connection-queries.ts';
import { Checkbox, SelectField, TextArea, TextField } from './fields.tsx';

const BACKEND_OPTIONS = SOURCE_BACKENDS.map((value) => ({
  value,
  label: SOURCE_DIALECTS[value].label,
}));

const TLS_OPTIONS = [
  { value: 'prefer', label: 'prefer (default)' },
  { value: 'disable', label: 'disable' },
  { value: 'require', label: 'require' },
  { value: 'verify-full', label: 'verify-full' },
];

const TLS_HINTS: Record<ConnectionDraft['tlsMode'], string> = {
  prefer: 'TLS when the server offers it, certificate not checked; plain otherwise.',
  disable: 'Plain TCP, no encryption.',
  require: 'TLS always; the certificate is not checked.',
  'verify-full': 'TLS with the certificate chain and host name checked against public CAs.',
};

function loginDatabaseHint(dialect: SourceDialect): string {
  const database = dialect.loginDatabase?.checksChangeCapture
    ? 'The database whose change data capture the test checks'
    : 'The database the test logs in to';
  return `${database} (default ${dialect.serverDatabase}). Not saved: each Replix database names its own source schema.`;
}

/**
 * The inputs of a connection, for creating and editing. `saved` is the stored connection when
 * editing: the engine is then fixed and empty secrets keep the stored ones.
 */
export function ConnectionFields(props: {
  draft: ConnectionDraft;
  onChange: (change: Partial<ConnectionDraft>) => void;
  errors: FieldErrors;
  account: Account | undefined;
  saved?: Connection;
  disabled?: boolean;
}) {
  const { draft, onChange, errors, saved } = props;
  const multiRegion = props.account?.limits.multiRegion ?? false;
  const regionOptions = [
    { value: 'eu-west-1', label: 'eu-west-1 (default)' },
    {
      value: 'us-east-1',
      label: multiRegion ? 'us-east-1' : 'us-east-1 (needs the Teams plan or above)',
    },
  ];
  const dialect = SOURCE_DIALECTS[draft.backend];
  const setBackend = (backend: Backend) => {
    // A port left at the old engine's default follows the engine.
    const port = draft.port === '' || draft.port === String(dialect.defaultPort) ? '' : draft.port;
    onChange({ backend, port });
  };
  return (
    <fieldset className="conn-fieldset" disabled={props.disabled}>
      <legend className="visually-hidden">Connection settings</legend>
      <div className="form-grid">
        <TextField
          label="Name"
          value={draft.name}
          onChange={(event) => onChange({ name: event.target.value })}
          error={errors.name}
          maxLength={100}
          autoComplete="off"
        />
        <SelectField
          label="Engine"
          value={draft.backend}
          onChange={(event) => setBackend(event.target.value as Backend)}
          options={BACKEND_OPTIONS}
          disabled={saved !== undefined}
          hint={saved ? 'The engine cannot change after creation.' : 'MySQL covers MariaDB.'}
          error={errors.backend}
        />
        <TextField
          label="Host"
          value={draft.host}
          onChange={(event) => onChange({ host: event.target.value })}
          error={errors.host}
          hint={draft.sshEnabled ? 'As the SSH server sees it.' : undefined}
          placeholder="db.example.com"
          autoComplete="off"
          spellCheck={false}
        />
        <TextField
          label="Port"
          type="number"
          inputMode="numeric"
          min={1}
          max={65535}
          value={draft.port}
          onChange={(event) => onChange({ port: event.target.value })}
          error={errors.port}
          placeholder={String(dialect.defaultPort)}
          hint={`Empty: ${dialect.defaultPort}.`}
        />
        <TextField
          label="User"
          value={draft.user}
          onChange={(event) => onChange({ user: event.target.value })}
          error={errors.user}
          autoComplete="off"
          spellCheck={false}
        />
        <TextField
          label="Password"
          type="password"
          value={draft.password}
          onChange={(event) => onChange({ password: event.target.value })}
          error={errors.password}
          autoComplete="new-password"
          disabled={draft.noPassword}
          hint={
            saved
              ? saved.hasPassword
                ? 'Leave empty to keep the stored password (it is never shown). Needed to test.'
                : 'None stored: the user has no password. Type one to store it.'
              : 'Optional: leave empty for a user without a password (MariaDB, PostgreSQL trust). Stored encrypted and never shown again.'
          }
        />
        {saved?.hasPassword && (
          <Checkbox
            label="The user has no password: remove the stored one"
            checked={draft.noPassword}
            onChange={(noPassword) => onChange({ noPassword, password: '' })}
          />
        )}
        {dialect.loginDatabase && (
          <TextField
            label="Login database"
            value={draft.database}
            onChange={(event) => onChange({ database: event.target.value })}
            error={errors.database}
            placeholder={dialect.serverDatabase}
            hint={loginDatabaseHint(dialect)}
            autoComplete="off"
          />
        )}
        <SelectField
          label="TLS mode"
          value={draft.tlsMode}
          onChange={(event) =>
            onChange({ tlsMode: event.target.value as ConnectionDraft['tlsMode'] })
          }
          options={TLS_OPTIONS}
          hint={TLS_HINTS[draft.tlsMode]}
          error={errors.tlsMode}
        />
        <SelectField
          label="Default region"
          value={draft.defaultRegion}
          onChange={(event) =>
            onChange({ defaultRegion: event.target.value as ConnectionDraft['defaultRegion'] })
          }
          options={regionOptions}
          error={errors.defaultRegion}
          hint="Where this connection’s databases run unless they say otherwise."
        />
      </div>
      <div className="conn-ssh stack">
        <Checkbox
          label="Connect through an SSH tunnel"
          checked={draft.sshEnabled}
          onChange={(sshEnabled) => onChange({ sshEnabled })}
        />
        {draft.sshEnabled && (
          <>
            <p className="muted conn-note">
              Replix opens an SSH session to this server and reaches the source host from there, so
              the host may be a private address. Only key authentication is supported.
            </p>
            <div className="form-grid">
              <TextField
                label="SSH host"
                value={draft.sshHost}
                onChange={(event) => onChange({ sshHost: event.target.value })}
                error={errors.sshHost}
                autoComplete="off"
                spellCheck={false}
              />
              <TextField
                label="SSH port"
                type="number"
                inputMode="numeric"
                min={1}
                max={65535}
                value={draft.sshPort}
                onChange={(event) => onChange({ sshPort: event.target.value })}
                error={errors.sshPort}
                placeholder="22"
                hint="Empty: 22."
              />
              <TextField
                label="SSH user"
                value={draft.sshUser}
                onChange={(event) => onChange({ sshUser: event.target.value })}
                error={errors.sshUser}
                autoComplete="off"
                spellCheck={false}
              />
            </div>
            <TextArea
              label="SSH private key"
              className="code"
              rows={5}
              value={draft.sshPrivateKey}
              onChange={(event) => onChange({ sshPrivateKey: event.target.value })}
              error={errors.sshPrivateKey}
              placeholder="-----BEGIN OPENSSH PRIVATE KEY-----"
              hint={
                saved?.ssh?.hasPrivateKey
                  ? 'Leave empty to keep the stored key (it is never shown). Needed to test.'
                  : 'An unencrypted OpenSSH or PEM private key (no passphrase). Stored encrypted and never shown again.'
              }
            />
          </>
        )}
      </div>
    </fieldset>
  );
}
