import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BuiltInIssuer } from '@replix/control-plane/config';

/** The demo's names in the control plane: `replix start` finds them again on the next start. */
export const DEMO_EMAIL = 'demo@replix.local';
const CONNECTION_NAME = 'demo shop';
const DATABASE_NAME = 'demo';
/** How long the demo may take to build and load before `replix start` gives up on it. */
const READY_TIMEOUT_MS = 5 * 60_000;

export interface DemoInstance {
  readonly databaseId: string;
  readonly instanceUrl: string;
  readonly apiKey: string;
}

interface Named {
  readonly id: string;
  readonly name: string;
}

/** A small client of the local control plane, as the demo account. */
function demoApi(apiUrl: string, token: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${apiUrl}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) {
      const error = (text ? JSON.parse(text) : {}) as { message?: string };
      throw new Error(`${method} ${path}: ${error.message ?? `HTTP ${response.status}`}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  };
}

/** The action that brings a demo database in `status` towards running, if any. */
function actionTowardsRunning(status: string): string | undefined {
  if (status === 'draft' || status === 'terminated') return 'provision';
  if (status === 'failed') return 'rebuild';
  if (status === 'paused') return 'resume';
  return undefined;
}

const PROGRESS: Record<string, string> = {
  building: 'Building the demo instance (compiling the schema, bundling the instance program)…',
  deploying: 'Starting the demo instance and loading its snapshot…',
};

/**
 * Makes sure the demo account has a connection to the demo source, a database over it that is
 * running, and an API key for it: made on the first start, found again on later ones (the key
 * is kept in the data folder, readable only by its owner, since the API shows a key only once).
 */
export async function setUpDemo(options: {
  readonly apiUrl: string;
  readonly issuer: BuiltInIssuer;
  readonly dataDir: string;
  readonly sourcePort: number;
  readonly progress: (message: string) => void;
}): Promise<DemoInstance> {
  const api = demoApi(options.apiUrl, await options.issuer.sign({ email: DEMO_EMAIL }));
  // The demo account is the account of whoever ran `replix start` on their own machine: they
  // have the terms at /terms already, and a local first sign-in goes straight to the dashboard
  // (issue 31) instead of a terms page between the banner's link and the demo. Accepting again
  // on a later start keeps the first acceptance.
  await api('POST', '/account/accept-tos', {});
  const source = { host: '127.0.0.1', port: options.sourcePort, user: 'postgres' };
  let connection = (await api<Named[]>('GET', '/connections')).find(
    (c) => c.name === CONNECTION_NAME,
  );
  if (!connection) {
    // The embedded source trusts local logins: a user without a password, tested on save.
    connection = await api<Named>('POST', '/connections', {
      name: CONNECTION_NAME,
      backend: 'postgres',
      ...source,
    });
  } else {
    await api('PATCH', `/connections/${connection.id}`, source);
  }
  let database = (await api<Named[]>('GET', '/databases')).find((d) => d.name === DATABASE_NAME);
  database ??= await api<Named>('POST', '/databases', {
    name: DATABASE_NAME,
    connectionId: connection.id,
    sourceSchema: 'postgres',
    schemaConfig: {},
    // The embedded demo source has no logical replication: re-read it every minute instead.
    syncMode: 'poll',
    syncInterval: 60,
  });
  const databaseId = database.id;

  interface Status {
    database: { status: string; lastError: string | null };
    instance: { endpointUrl: string | null; healthStatus: string | null } | null;
  }
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let shown = '';
  let requested = false;
  for (;;) {
    const status = await api<Status>('GET', `/databases/${databaseId}/instance`);
    const current = status.database.status;
    if (
      current === 'running' &&
      status.instance?.endpointUrl &&
      status.instance.healthStatus === 'ok'
    ) {
      return {
        databaseId,
        instanceUrl: status.instance.endpointUrl,
        apiKey: await demoKey(api, databaseId, options.dataDir, status.instance.endpointUrl),
      };
    }
    const action = actionTowardsRunning(current);
    if (action && requested)
      throw new Error(
        `The demo database is ${current}: ${status.database.lastError ?? 'no reason given'}`,
      );
    if (action) {
      await api('POST', `/databases/${databaseId}/${action}`);
      requested = true;
    }
    const message =
      PROGRESS[current] ??
      (current === 'running' ? 'Waiting for the demo instance to report healthy…' : '');
    if (message && message !== shown) options.progress(message);
    shown = message || shown;
    if (Date.now() > deadline)
      throw new Error(
        `The demo database did not start within ${READY_TIMEOUT_MS / 60_000} minutes (status ${current}).`,
      );
    await sleep(300);
  }
}

/** The demo's API key: the one kept in the data folder while it exists, else a new one. */
async function demoKey(
  api: ReturnType<typeof demoApi>,
  databaseId: string,
  dataDir: string,
  instanceUrl: string,
): Promise<string> {
  const path = join(dataDir, 'demo-api-key');
  const keys = await api<Array<{ keyId: string }>>('GET', `/databases/${databaseId}/api-keys`);
  let key: string | undefined;
  try {
    key = readFileSync(path, 'utf8').trim();
  } catch {}
  if (!key || !keys.some((k) => key?.startsWith(`rxk_${k.keyId}.`))) {
    key = (
      await api<{ key: string }>('POST', `/databases/${databaseId}/api-keys`, { name: 'demo' })
    ).key;
    writeFileSync(path, key, { mode: 0o600 });
  }
  // The reconciler hands a new key to the instance within a second or two.
  for (let attempt = 0; attempt < 50; attempt++) {
    const response = await fetch(`${instanceUrl}/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: 'customers { id } LIMIT 1',
    });
    if (response.status === 200) break;
    await sleep(200);
  }
  return key;
}
