import { compileSchema } from '@replix/engine';
import { connectorFromUrl } from '@replix/sources';
import pino, { type Logger } from 'pino';
import { ApiKeyVerifier, deriveApiKey } from './api-keys.ts';
import type { InstanceConfig } from './instance-config.ts';
import { buildInstanceServer } from './server.ts';
import { SnapshotController } from './snapshot-controller.ts';
import { RELEASE } from './version.ts';

export interface RunningInstance {
  readonly url: string;
  /** The key made at start when none was configured. */
  readonly apiKey: string | undefined;
  readonly controller: SnapshotController;
  readonly keys: ApiKeyVerifier;
  close(): Promise<void>;
}

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'replix-instance' } }, pino.destination(2));
}

/**
 * Starts an instance: introspects the source, compiles the schema, listens at once (answering
 * 503 with loading progress), loads the snapshot, and resolves when it serves queries.
 */
export async function startInstance(
  config: InstanceConfig,
  log = createLogger(config.logLevel),
): Promise<RunningInstance> {
  const connector = connectorFromUrl(config.sourceUrl);
  try {
    const schema = compileSchema(await connector.introspect(), config.schemaConfig);
    const controller = new SnapshotController(connector, schema, {
      memoryCapMb: config.schemaConfig.memory_cap_mb,
      syncMode: config.schemaConfig.sync.mode,
      log,
    });
    const keys = new ApiKeyVerifier(config.keySecret, config.keyIds);
    const app = buildInstanceServer({
      controller,
      keys,
      version: `${RELEASE}-${config.buildHash}`,
      maxBodyBytes: config.schemaConfig.query.max_body_bytes,
      log,
    });
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    try {
      await controller.start();
    } catch (error) {
      await app.close();
      throw error;
    }
    return {
      url: `http://${host}:${port}`,
      apiKey: config.generatedKey
        ? deriveApiKey(config.keySecret, config.keyIds[0] as string)
        : undefined,
      controller,
      keys,
      async close() {
        await app.close();
        await connector.close();
      },
    };
  } catch (error) {
    await connector.close().catch(() => {});
    throw error;
  }
}
