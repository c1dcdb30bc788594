import process from 'node:process';
import { BuiltInIssuer } from '@replix/control-plane/config';
import type { Command } from 'commander';
import { apiAction, CommandFailure, defaultApiUrl, saveCredentials } from './api-session.ts';
import { controlPlaneConfigOrExit } from './control-plane-commands.ts';

interface LoginOptions {
  email?: string;
  admin: boolean;
  token?: string;
  apiUrl?: string;
}

/**
 * `replix login`: saves a bearer token and the API's address to
 * `<REPLIX_DATA_DIR>/credentials.json` (mode 0600) for the other API commands. With `--email`
 * the local control plane's built-in issuer signs the token (as `replix token` does); with
 * `--token` a token from an OIDC provider is saved as it is.
 */
export function addLoginCommand(program: Command): void {
  program
    .command('login')
    .description('save a token for the control-plane API commands (connections, databases, …)')
    .option('--email <email>', 'sign a token with the built-in issuer for this user')
    .option('--admin', 'with --email: member of the service-admins group', false)
    .option('--token <jwt>', 'save this token (from your OIDC identity provider)')
    .option('--api-url <url>', 'the control plane (default REPLIX_API_URL or 127.0.0.1:4000)')
    .action(
      apiAction('login', async (options: LoginOptions, command: Command) => {
        if ((options.email === undefined) === (options.token === undefined)) {
          command.error('error: give either --email <email> or --token <jwt>.', {
            exitCode: 2,
            code: 'replix.usage',
          });
        }
        const apiUrl = options.apiUrl ?? defaultApiUrl();
        let token = options.token;
        if (options.email !== undefined) {
          if (!/^[^@\s]+@[^@\s]+$/.test(options.email)) {
            throw new CommandFailure('--email must be an email address.');
          }
          const config = controlPlaneConfigOrExit('login');
          if (config.oidc) {
            throw new CommandFailure(
              'REPLIX_OIDC_ISSUER is set; get a token from that identity provider and use --token.',
            );
          }
          const issuer = await BuiltInIssuer.open(config.dataDir);
          token = await issuer.sign({ email: options.email, admin: options.admin });
        }
        const path = saveCredentials({ apiUrl, token: token as string });
        process.stdout.write(`Logged in to ${apiUrl}; token saved in ${path}.\n`);
      }),
    );
}
