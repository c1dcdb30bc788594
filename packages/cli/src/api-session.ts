import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { type Client, createReplixClient, ReplixApiError } from '@replix/client';
import { dataDirOf } from '@replix/control-plane/config';
import { ConfigError } from '@replix/runtime';
import { CommanderError } from 'commander';
import { cliEnvironment } from './cli-environment.ts';
import { EXIT_FAILED } from './exit-codes.ts';
import { formatRows } from './format-rows.ts';

/** What `replix login` saves: where the control plane is and the bearer token to send it. */
export interface Credentials {
  readonly apiUrl: string;
  readonly token: string;
}

/** Where `replix login` saves: in the data folder, as the control plane resolves it. */
export function credentialsPath(): string {
  return join(dataDirOf(cliEnvironment()), 'credentials.json');
}

/** The local control plane's address: REPLIX_API_URL, else 127.0.0.1 on REPLIX_API_PORT (4000). */
export function defaultApiUrl(): string {
  const { REPLIX_API_URL, REPLIX_API_PORT } = cliEnvironment();
  return REPLIX_API_URL ?? `http://127.0.0.1:${REPLIX_API_PORT}`;
}

/** Saves the credentials readable by the user only (they hold a bearer token). */
export function saveCredentials(credentials: Credentials): string {
  const path = credentialsPath();
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // writeFileSync's mode applies only when it creates the file.
  return path;
}

function savedCredentials(): Partial<Credentials> {
  try {
    const saved = JSON.parse(readFileSync(credentialsPath(), 'utf8')) as Partial<Credentials>;
    return typeof saved === 'object' && saved !== null ? saved : {};
  } catch {
    return {};
  }
}

/** A command failed in a way the user can act on; printed as `replix <cmd>: <message>`. */
export class CommandFailure extends Error {}

/**
 * A client for the control plane: REPLIX_API_URL and REPLIX_TOKEN override what `replix login`
 * saved. Without any token the command fails with a hint to log in.
 */
export function apiClient(): Client {
  const saved = savedCredentials();
  const { REPLIX_TOKEN, REPLIX_API_URL } = cliEnvironment();
  const token = REPLIX_TOKEN ?? saved.token;
  if (!token) {
    throw new CommandFailure(
      'not logged in: run `replix login --email <you@example.com>` (or set REPLIX_TOKEN).',
    );
  }
  const baseUrl = REPLIX_API_URL ?? saved.apiUrl ?? defaultApiUrl();
  return createReplixClient({ baseUrl, token });
}

/**
 * Runs a command's body; an API error prints as `replix <cmd>: <error>: <message>` and a
 * CommandFailure or ConfigError as `replix <cmd>: <message>`, all exiting 1 (thrown as a
 * CommanderError, which main() turns into the exit code).
 */
export function apiAction<Args extends unknown[]>(
  command: string,
  body: (...args: Args) => Promise<void>,
): (...args: Args) => Promise<void> {
  return async (...args: Args) => {
    try {
      await body(...args);
    } catch (error) {
      let message: string;
      if (error instanceof ReplixApiError) message = `${error.error}: ${error.message}`;
      else if (error instanceof CommandFailure || error instanceof ConfigError)
        message = error.message;
      else throw error;
      process.stderr.write(`replix ${command}: ${message}\n`);
      throw new CommanderError(EXIT_FAILED, 'replix.failed', message);
    }
  };
}

/** `--json`: the API's answer as it came, indented. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Rows as an aligned table of the given columns (in that order). */
export function printTable<Row extends object>(
  rows: readonly Row[],
  columns: readonly (keyof Row & string)[],
  empty: string,
): void {
  if (rows.length === 0) {
    process.stdout.write(`${empty}\n`);
    return;
  }
  const picked = rows.map((row) =>
    Object.fromEntries(columns.map((c) => [c, (row as Record<string, unknown>)[c]])),
  );
  process.stdout.write(`${formatRows(picked)}\n`);
}

/** One object as `key: value` lines. */
export function printFields(value: object): void {
  const entries = Object.entries(value);
  const width = Math.max(...entries.map(([key]) => key.length));
  for (const [key, field] of entries) {
    const text =
      field !== null && typeof field === 'object' ? JSON.stringify(field) : String(field);
    process.stdout.write(`${`${key}:`.padEnd(width + 2)}${text}\n`);
  }
}
