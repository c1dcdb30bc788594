import { readFileSync, statSync } from 'node:fs';
import type { AllowedKeyIds } from '@replix/instance-protocol';
import type { Logger } from 'pino';
import { KEY_ID_PATTERN } from '../config/key-id-list-variable.ts';
import type { ApiKeyVerifier } from './api-keys.ts';

/** How often the keys file is looked at: a deleted key stops working within a second. */
export const KEYS_FILE_POLL_MS = 500;

const FORMAT = 'expected {"keyIds": [<16 lowercase hex digits>, …], "adminKeyIds": [<same>, …]}';

function isKeyIdList(value: unknown): value is string[] {
  return (
    Array.isArray(value) && value.every((id) => typeof id === 'string' && KEY_ID_PATTERN.test(id))
  );
}

/**
 * Reads `{"keyIds": [...query key ids], "adminKeyIds": [...admin key ids]}` (`adminKeyIds` may be
 * absent: files written before scopes existed hold query keys only); throws a message for the
 * log when it is anything else.
 */
export function readKeysFile(path: string): AllowedKeyIds {
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const { keyIds, adminKeyIds = [] } = (parsed ?? {}) as {
    keyIds?: unknown;
    adminKeyIds?: unknown;
  };
  if (!isKeyIdList(keyIds) || !isKeyIdList(adminKeyIds)) throw new Error(FORMAT);
  return { keyIds, adminKeyIds };
}

/**
 * Keeps the instance's accepted key ids equal to the keys file the driver rewrites
 * (`REPLIX_KEYS_FILE`). The file is polled rather than watched with inotify: drivers replace it
 * by rename, and polling sees that the same way on every file system. A missing or malformed
 * file keeps the current set and logs one warning until it changes again.
 */
export function watchKeysFile(
  path: string,
  keys: ApiKeyVerifier,
  log: Logger,
  intervalMs = KEYS_FILE_POLL_MS,
): { close(): void } {
  let seen = '';
  let warned = '';
  const check = () => {
    let stamp: string;
    try {
      const stat = statSync(path);
      stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    } catch {
      stamp = 'missing';
    }
    if (stamp === seen) return;
    seen = stamp;
    try {
      if (stamp === 'missing') throw new Error('the file does not exist');
      const allowed = readKeysFile(path);
      keys.setAllowed(allowed);
      warned = '';
      log.info(
        { keys: allowed.keyIds.length, adminKeys: allowed.adminKeyIds.length },
        'API keys updated from the keys file',
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (reason !== warned) log.warn({ reason }, 'keys file unreadable; keeping the current keys');
      warned = reason;
    }
  };
  check();
  const timer = setInterval(check, intervalMs);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
