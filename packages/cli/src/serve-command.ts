import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import type { RunningInstance, runArtifact } from '@replix/instance';
import { ARTIFACT_FILES, memorySizeMb } from '@replix/instance-protocol';
import { ConfigError } from '@replix/runtime';
import type { Command } from 'commander';
import { runInBoundedHeap } from './bounded-heap.ts';

export interface ServeOptions {
  source?: string;
  artifact?: string;
  config?: string;
  port?: string;
  host?: string;
  logLevel?: string;
  memoryMb?: string;
  threads?: string;
  checkpointDir?: string;
}

/**
 * Closes `close` on Ctrl-C or SIGTERM, then exits 0. Repeated signals while closing are ignored:
 * under `npm start` a Ctrl-C reaches us twice (from the terminal and forwarded by npm), and
 * dying on the second one would leave instance processes behind.
 */
export function exitOnSignals(close: () => Promise<void>): void {
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

const CONFIG_ERROR_NAMES = ['ConfigError', 'InstanceConfigError', 'SchemaConfigError'];

/** A message for the terminal: config problems as they are, anything else without internals. */
export function describeStartError(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  // Recognised by name: an artifact's program carries its own copy of these classes
  // (InstanceConfigError: the name in artifacts built before ConfigError), and the engine's
  // SchemaConfigError is not imported here, so that `serve --artifact` never loads the engine.
  const name = (error as { name?: unknown }).name;
  if (error instanceof Error && typeof name === 'string' && CONFIG_ERROR_NAMES.includes(name))
    return error.message;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${message} (${code})` : message;
}

/**
 * Runs the instance program of a build artifact: imports its `instance.mjs` and calls its
 * runArtifact, so the instance serves exactly the engine it was built with.
 */
async function startFromArtifact(
  dir: string,
  options: ServeOptions,
  onFatal: (reason: string) => void,
): Promise<RunningInstance> {
  const artifactDir = resolve(dir);
  const program = join(artifactDir, ARTIFACT_FILES.program);
  if (!existsSync(program)) {
    throw new ConfigError(
      `${artifactDir} is not a build artifact: it has no ${ARTIFACT_FILES.program}.`,
    );
  }
  const loaded = (await import(pathToFileURL(program).href)) as {
    runArtifact?: typeof runArtifact;
  };
  if (typeof loaded.runArtifact !== 'function') {
    throw new ConfigError(`The artifact's ${ARTIFACT_FILES.program} has no runArtifact.`);
  }
  return loaded.runArtifact(artifactDir, process.env, {
    source: options.source,
    port: options.port,
    host: options.host,
    logLevel: options.logLevel,
    threads: options.threads,
    checkpointDir: options.checkpointDir,
    onFatal,
  });
}

export function addServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve one database: load a snapshot of the source and answer queries over HTTP')
    .option(
      '--source <url>',
      'mysql://user:pass@host:port/db or postgres://user:pass@host:port/db (required unless --artifact and REPLIX_SOURCE_URL)',
    )
    .option(
      '--artifact <dir>',
      "run a build artifact's instance program; configured by the launch environment (docs/control-plane/builds.md)",
    )
    .option('--config <file>', 'schema config file (JSON); see docs/schema-config.md')
    .option('--port <n>', 'port to listen on; 0 picks a free one', '0')
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .option('--log-level <level>', 'log level (trace, debug, info, warn, error)')
    .option(
      '--memory-mb <n>',
      "the instance's memory size in MB (or REPLIX_MEMORY_MB): the heap gets 70% of it and the snapshot is capped at it",
    )
    .option(
      '--threads <n>',
      'threads answering queries over one snapshot (or REPLIX_THREADS; default 1)',
    )
    .option(
      '--checkpoint-dir <dir>',
      'checkpoint the snapshot into this folder and start from it next time instead of reading the whole source (or REPLIX_CHECKPOINT_DIR); see docs/replication.md',
    )
    .addHelpText(
      'after',
      [
        '',
        'When ready it prints one JSON line on stdout:',
        '  {"event":"ready","url":"http://127.0.0.1:PORT","apiKey":"rxk_…","adminKey":"rxk_…","time":1764079387120}',
        'time is when it became ready, in milliseconds since the epoch (as in the JSON log lines).',
        'apiKey is a query key (POST/GET /query, GET /schema): the one to give apps and browsers.',
        'adminKey may also reload, pause or resume replication, and read /metrics and /health/detail.',
        'Both are printed only when serve made them: with REPLIX_KEY_SECRET, REPLIX_KEY_IDS (query',
        'keys) and REPLIX_ADMIN_KEY_IDS (admin keys) set, the ready line carries no key.',
        'Logs are JSON lines on stderr.',
      ].join('\n'),
    )
    .action(async (options: ServeOptions) => {
      let instance: RunningInstance | undefined;
      const onFatal = (reason: string) => {
        process.stderr.write(`replix serve: stopping: ${reason}\n`);
        (instance ? instance.close() : Promise.resolve()).finally(() => process.exit(1));
      };
      try {
        const memoryMb = memorySizeMb(options.memoryMb);
        const relaunched = runInBoundedHeap(memoryMb);
        if (relaunched) process.exit(await relaunched);
        if (options.artifact) {
          if (options.config) {
            throw new ConfigError(
              '--config cannot be used with --artifact: the artifact carries its schema config.',
            );
          }
          instance = await startFromArtifact(options.artifact, options, onFatal);
        } else {
          // Only now: an artifact runs its own bundled program, and loads none of this.
          const { resolveInstanceConfig, startInstance, withMemorySize } = await import(
            '@replix/instance'
          );
          const config = resolveInstanceConfig(options);
          const sized = memoryMb === undefined ? config : withMemorySize(config, memoryMb);
          instance = await startInstance(sized, undefined, { onFatal });
        }
      } catch (error) {
        process.stderr.write(`replix serve: ${describeStartError(error)}\n`);
        process.exit(1);
      }
      const running = instance;
      exitOnSignals(() => running.close());
      const ready: Record<string, string | number> = { event: 'ready', url: running.url };
      if (running.apiKey) ready.apiKey = running.apiKey;
      if (running.adminKey) ready.adminKey = running.adminKey;
      // When it happened: the instance log (read later, by the control plane) shows this time.
      ready.time = Date.now();
      process.stdout.write(`${JSON.stringify(ready)}\n`);
    });
}
