import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, resolveControlPlaneConfig, startControlPlane } from '@replix/control-plane';
import pino from 'pino';

/**
 * The OpenAPI document the control plane serves now, read from a throwaway API (in-memory PGlite
 * store, temporary data folder, a free port) so nothing running or stored is touched.
 */
export async function servedOpenApiDocument(): Promise<unknown> {
  const dataDir = mkdtempSync(join(tmpdir(), 'replix-openapi-'));
  try {
    const config = resolveControlPlaneConfig({
      REPLIX_DATA_DIR: dataDir,
      REPLIX_API_PORT: '0',
      REPLIX_SECRET_KEY: randomBytes(32).toString('hex'),
    });
    const running = await startControlPlane(config, {
      roles: ['api'],
      store: await openStore({ inMemory: true }),
      log: pino({ level: 'silent' }),
    });
    try {
      const response = await fetch(`${running.url}/v1/openapi.json`);
      if (!response.ok) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
      return await response.json();
    } finally {
      await running.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The committed form of the document: two-space JSON with a final newline (stable diffs). */
export function openApiJsonText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
