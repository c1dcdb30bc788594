/**
 * The key ids an instance accepts, by scope: `keyIds` may query and read `/schema`;
 * `adminKeyIds` may do everything (reload, replication pause/resume, metrics, health detail).
 * The control plane's own key is always an admin key.
 */
export interface InstanceKeySet {
  readonly keyIds: readonly string[];
  readonly adminKeyIds: readonly string[];
}

/** The instance's keys file (`REPLIX_KEYS_FILE`): `{"keyIds": […], "adminKeyIds": […]}`. */
export function keysFileText(keys: InstanceKeySet): string {
  return `${JSON.stringify({ keyIds: keys.keyIds, adminKeyIds: keys.adminKeyIds })}\n`;
}
