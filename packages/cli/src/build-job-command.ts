import process from 'node:process';
import type { runBuildJob } from '@replix/control-plane';
import { ConfigError } from '@replix/runtime';
import type { Command } from 'commander';
import { controlPlaneConfigOrExit } from './control-plane-commands.ts';
import { EXIT_FAILED, EXIT_USAGE } from './exit-codes.ts';

/**
 * `replix build-job`: runs the one build `REPLIX_BUILD_ID` names and exits: 0 when it
 * succeeded, 1 when it failed (the reason is recorded on the build), 2 when the build is not
 * one to run (unknown, finished, another builder's). What a Kubernetes build Job runs.
 */
export function addBuildJobCommand(program: Command): void {
  program
    .command('build-job')
    .description(
      'run one build (REPLIX_BUILD_ID) and exit: what a build Job of the kubernetes driver runs',
    )
    .action(async () => {
      const { buildJobSettings, buildJobStoreConfig, createControlPlaneLogger, runBuildJob } =
        await import('@replix/control-plane');
      let settings: ReturnType<typeof buildJobSettings>;
      let config: ReturnType<typeof buildJobStoreConfig>;
      try {
        settings = buildJobSettings();
        // Given its build's credential, a job needs no secret key (a Kubernetes build Job).
        config =
          settings.REPLIX_BUILD_SOURCE_URL === undefined
            ? controlPlaneConfigOrExit('build-job')
            : buildJobStoreConfig();
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        process.stderr.write(`replix build-job: ${error.message}\n`);
        process.exit(EXIT_USAGE);
      }
      const stopping = new AbortController();
      const stop = () => stopping.abort();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      const log = createControlPlaneLogger(config.logLevel);
      let outcome: Awaited<ReturnType<typeof runBuildJob>>;
      try {
        outcome = await runBuildJob(config, settings, log, stopping.signal);
      } catch (error) {
        // The store could not be reached, say: the log has the error, the terminal no details.
        log.error({ err: error }, 'build job could not run');
        process.stderr.write('replix build-job: the build job could not run; see its log.\n');
        process.exit(EXIT_FAILED);
      }
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      if (outcome.kind === 'refused') {
        process.stderr.write(`replix build-job: ${outcome.message}\n`);
        process.exit(EXIT_USAGE);
      }
      const line = {
        event: 'build-finished',
        buildId: outcome.buildId,
        result: outcome.result,
        ...(outcome.error ? { error: outcome.error } : {}),
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
      if (outcome.result !== 'succeeded') process.exit(EXIT_FAILED);
    });
}
