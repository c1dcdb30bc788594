import type {
  PatchV1ConnectionsByIdData,
  PostV1ConnectionsData,
  PostV1ConnectionsTestConnectionData,
} from '@replix/client';
import { DEFAULT_SOURCE_BACKEND, SOURCE_DIALECTS } from '@replix/sources/dialect';
import { ReplixApiError } from '../api.ts';
import type { Backend, Connection, Region, TlsMode } from './connection-queries.ts';

/** The connection form's state: every input as typed (numbers stay text until sent). */
export interface ConnectionDraft {
  name: string;
  backend: Backend;
  host: string;
  port: string;
  user: string;
  password: string;
  /** Editing: the user has no password any more (the stored one is removed). */
  noPassword: boolean;
  /** PostgreSQL / SQL Server: the database test-connection logs in to; never stored. */
  database: string;
  tlsMode: TlsMode;
  defaultRegion: Region;
  sshEnabled: boolean;
  sshHost: string;
  sshPort: string;
  sshUser: string;
  sshPrivateKey: string;
}

export type DraftField = keyof ConnectionDraft;
export type FieldErrors = Partial<Record<DraftField, string>>;

/** What the form is for: the checks differ (a saved password need not be typed again). */
export type DraftPurpose = 'create' | 'edit' | 'test';

export function emptyDraft(): ConnectionDraft {
  return {
    name: '',
    backend: DEFAULT_SOURCE_BACKEND,
    host: '',
    port: '',
    user: '',
    password: '',
    noPassword: false,
    database: '',
    tlsMode: 'prefer',
    defaultRegion: 'eu-west-1',
    sshEnabled: false,
    sshHost: '',
    sshPort: '',
    sshUser: '',
    sshPrivateKey: '',
  };
}

/** A saved connection as a draft; the secrets are never returned, so they start empty. */
export function draftFromConnection(connection: Connection): ConnectionDraft {
  return {
    ...emptyDraft(),
    name: connection.name,
    backend: connection.backend,
    host: connection.host,
    port: String(connection.port),
    user: connection.user,
    tlsMode: connection.tlsMode,
    defaultRegion: connection.defaultRegion,
    sshEnabled: connection.ssh !== null,
    sshHost: connection.ssh?.host ?? '',
    sshPort: connection.ssh ? String(connection.ssh.port) : '',
    sshUser: connection.ssh?.user ?? '',
  };
}

function portOf(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

function portError(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  const port = Number(text);
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? undefined
    : 'A port is a whole number from 1 to 65535.';
}

/** Checks the browser can make before asking the API (which checks everything again). */
export function validateDraft(
  draft: ConnectionDraft,
  purpose: DraftPurpose,
  saved?: Connection,
): FieldErrors {
  const errors: FieldErrors = {};
  if (purpose !== 'test' && !draft.name.trim()) errors.name = 'Give the connection a name.';
  if (!draft.host.trim()) errors.host = 'Enter the source server’s host name or address.';
  else if (/[\s/@?#]/.test(draft.host.trim())) {
    errors.host = 'A host name or address only: no spaces, /, @, ? or #.';
  }
  errors.port = portError(draft.port);
  if (!draft.user.trim()) errors.user = 'Enter the user Replix logs in as.';
  // A user may have no password (MariaDB, PostgreSQL trust): saving tests it without one, but
  // the separate test of typed settings needs one (the API's raw test requires it).
  if (purpose === 'test' && !draft.password) {
    errors.password = saved
      ? 'Enter the password to test: the stored one is never sent back to the browser.'
      : 'Enter the password to test here. For a user without one, leave it empty and create the connection: it is tested before it is saved.';
  }
  if (draft.sshEnabled) {
    if (!draft.sshHost.trim()) errors.sshHost = 'Enter the SSH server’s host.';
    errors.sshPort = portError(draft.sshPort);
    if (!draft.sshUser.trim()) errors.sshUser = 'Enter the SSH user.';
    const keyNeeded = purpose === 'create' || purpose === 'test' || !saved?.ssh?.hasPrivateKey;
    if (keyNeeded && !draft.sshPrivateKey.trim()) {
      errors.sshPrivateKey =
        purpose === 'test' && saved?.ssh?.hasPrivateKey
          ? 'Paste the private key to test: the stored one is never sent back to the browser.'
          : 'Paste the SSH private key.';
    }
  }
  for (const field of Object.keys(errors) as DraftField[]) {
    if (errors[field] === undefined) delete errors[field];
  }
  return errors;
}

function sshInput(draft: ConnectionDraft) {
  return {
    host: draft.sshHost.trim(),
    port: portOf(draft.sshPort),
    user: draft.sshUser.trim(),
  };
}

/** The create body; `skipTest` saves it even when its test fails (the "Save anyway" choice). */
export function createBody(
  draft: ConnectionDraft,
  skipTest = false,
): PostV1ConnectionsData['body'] {
  return {
    name: draft.name.trim(),
    backend: draft.backend,
    host: draft.host.trim(),
    port: portOf(draft.port),
    user: draft.user.trim(),
    // Empty: a user without a password.
    password: draft.password || undefined,
    ...(skipTest ? { skipTest } : {}),
    defaultRegion: draft.defaultRegion,
    tlsMode: draft.tlsMode,
    ssh: draft.sshEnabled ? { ...sshInput(draft), privateKey: draft.sshPrivateKey } : undefined,
  };
}

export function testBody(draft: ConnectionDraft): PostV1ConnectionsTestConnectionData['body'] {
  return {
    backend: draft.backend,
    mysqlHost: draft.host.trim(),
    mysqlPort: portOf(draft.port),
    mysqlUser: draft.user.trim(),
    mysqlPassword: draft.password,
    database:
      SOURCE_DIALECTS[draft.backend].loginDatabase && draft.database.trim()
        ? draft.database.trim()
        : undefined,
    tlsMode: draft.tlsMode,
    ssh: draft.sshEnabled ? { ...sshInput(draft), privateKey: draft.sshPrivateKey } : undefined,
  };
}

/** Only what changed, so the audit log names the fields really edited. */
export function patchBody(
  draft: ConnectionDraft,
  saved: Connection,
): PatchV1ConnectionsByIdData['body'] {
  const body: PatchV1ConnectionsByIdData['body'] = {};
  if (draft.name.trim() !== saved.name) body.name = draft.name.trim();
  if (draft.host.trim() !== saved.host) body.host = draft.host.trim();
  const port = portOf(draft.port) ?? SOURCE_DIALECTS[saved.backend].defaultPort;
  if (port !== saved.port) body.port = port;
  if (draft.user.trim() !== saved.user) body.user = draft.user.trim();
  if (draft.noPassword) {
    if (saved.hasPassword) body.password = null;
  } else if (draft.password) body.password = draft.password;
  if (draft.tlsMode !== saved.tlsMode) body.tlsMode = draft.tlsMode;
  if (draft.defaultRegion !== saved.defaultRegion) body.defaultRegion = draft.defaultRegion;
  if (!draft.sshEnabled) {
    if (saved.ssh) body.ssh = null;
  } else {
    const ssh = sshInput(draft);
    const changed =
      !saved.ssh ||
      draft.sshPrivateKey.trim() !== '' ||
      ssh.host !== saved.ssh.host ||
      (ssh.port ?? 22) !== saved.ssh.port ||
      ssh.user !== saved.ssh.user;
    if (changed) {
      // Without a new key the API keeps the stored one.
      body.ssh = draft.sshPrivateKey.trim() ? { ...ssh, privateKey: draft.sshPrivateKey } : ssh;
    }
  }
  return body;
}

/** API field names (create, PATCH and test-connection bodies) → the form field showing them. */
const API_FIELDS: Record<string, DraftField> = {
  name: 'name',
  backend: 'backend',
  host: 'host',
  mysqlHost: 'host',
  port: 'port',
  mysqlPort: 'port',
  user: 'user',
  mysqlUser: 'user',
  password: 'password',
  mysqlPassword: 'password',
  database: 'database',
  tlsMode: 'tlsMode',
  defaultRegion: 'defaultRegion',
  'ssh.host': 'sshHost',
  'ssh.port': 'sshPort',
  'ssh.user': 'sshUser',
  'ssh.privateKey': 'sshPrivateKey',
};

/**
 * The form field a 400 is about, when the API's message names one (`body.port must be <=
 * 65535.`), so the message can sit under that field.
 */
export function fieldOfApiError(error: unknown): DraftField | undefined {
  if (!(error instanceof ReplixApiError) || error.status !== 400) return undefined;
  const match = /\bbody\.([A-Za-z]+(?:\.[A-Za-z]+)?)/.exec(error.message);
  return match ? API_FIELDS[match[1]!] : undefined;
}
