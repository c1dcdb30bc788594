import process from 'node:process';
import {
  createReplixClient,
  getV1Account,
  getV1AuthConfig,
  ReplixApiError,
  unwrap,
} from '@replix/client';
import { BuiltInIssuer } from '@replix/control-plane/config';
import { type Command, CommanderError } from 'commander';
import { apiAction, CommandFailure, defaultApiUrl, saveCredentials } from './api-session.ts';
import { controlPlaneConfigOrExit } from './control-plane-commands.ts';
import { DeviceLoginEnded } from './device-polling.ts';
import { noSigningKeyMessage } from './local-issuer.ts';

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
 * `--token` a token from an OIDC provider is saved as it is; with neither, against a control
 * plane with an OIDC issuer, the user signs in at the issuer (the device flow, device-login.ts).
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
        if (options.email !== undefined && options.token !== undefined) {
          command.error('error: give either --email <email> or --token <jwt>, not both.', {
            exitCode: 2,
            code: 'replix.usage',
          });
        }
        const apiUrl = options.apiUrl ?? defaultApiUrl();
        if (options.email === undefined && options.token === undefined) {
          const token = await signInAtIssuer(apiUrl, command);
          await checkedSave(apiUrl, token, undefined);
          return;
        }
        let token = options.token;
        let dataDir: string | undefined;
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
          const issuer = await BuiltInIssuer.openExisting(config.dataDir);
          if (!issuer) throw new CommandFailure(noSigningKeyMessage(config.dataDir));
          token = await issuer.sign({ email: options.email, admin: options.admin });
          dataDir = config.dataDir;
        }
        await checkedSave(apiUrl, token as string, dataDir);
      }),
    );
}

/**
 * Asks the control plane who the token is before saying anything is logged in: a token it
 * refuses is not saved (with the likely cause: a built-in token signed with another data
 * folder's key); one saved while the control plane does not answer is said to be unchecked.
 * `dataDir`: the folder whose key signed the token, for a built-in one.
 */
async function checkedSave(apiUrl: string, token: string, dataDir: string | undefined) {
  let email: string;
  try {
    const account = await unwrap(
      getV1Account({ client: createReplixClient({ baseUrl: apiUrl, token }) }),
    );
    email = account.user.email;
  } catch (error) {
    if (!(error instanceof ReplixApiError)) throw error;
    if (error.error === 'unreachable') {
      const path = saveCredentials({ apiUrl, token });
      throw new CommandFailure(
        `token saved in ${path}, but ${apiUrl} did not answer, so it is not checked: start the control plane (npx replix start) or give its address with --api-url.`,
      );
    }
    if (error.error === 'unauthorized' && dataDir !== undefined) {
      throw new CommandFailure(
        `${apiUrl} refused a token signed with the key of ${dataDir}: it runs with another data folder. Run this with REPLIX_DATA_DIR set to the folder the control plane uses.`,
      );
    }
    throw new CommandFailure(`${apiUrl} refused the token: ${error.message}`);
  }
  const path = saveCredentials({ apiUrl, token });
  process.stdout.write(`Logged in to ${apiUrl} as ${email}; token saved in ${path}.\n`);
}

/** The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it. */
const EXIT_INTERRUPTED = 130;

/** The device flow against the issuer the control plane names; the access token it gives. */
async function signInAtIssuer(apiUrl: string, command: Command): Promise<string> {
  const { oidc } = await unwrap(
    getV1AuthConfig({ client: createReplixClient({ baseUrl: apiUrl }) }),
  );
  if (!oidc) {
    command.error(
      `error: ${apiUrl} signs in with its built-in issuer: give either --email <email> or --token <jwt>.`,
      { exitCode: 2, code: 'replix.usage' },
    );
  }
  if (!oidc.cliClientId) {
    throw new CommandFailure(
      `the control plane names no CLI client (REPLIX_OIDC_CLI_CLIENT_ID): get a token from ${oidc.issuer} and use --token.`,
    );
  }
  // Loaded here: only this path needs the OAuth client.
  const { deviceLogin } = await import('./device-login.ts');
  const cancel = new AbortController();
  const onInterrupt = () => cancel.abort();
  process.once('SIGINT', onInterrupt);
  try {
    return await deviceLogin(
      { issuer: oidc.issuer, clientId: oidc.cliClientId, scopes: oidc.scopes },
      { say: (text) => process.stdout.write(text), signal: cancel.signal },
    );
  } catch (error) {
    if (error instanceof DeviceLoginEnded) throw new CommandFailure(error.message);
    if (cancel.signal.aborted) {
      process.stderr.write('replix login: sign-in cancelled.\n');
      throw new CommanderError(EXIT_INTERRUPTED, 'replix.interrupted', 'sign-in cancelled');
    }
    throw new CommandFailure(`sign-in at ${oidc.issuer} failed: ${(error as Error).message}`);
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}
