import process from 'node:process';
import { LOGIN_LINK_TTL_SECONDS } from '@replix/control-plane/config';
import type { Command } from 'commander';
import { controlPlaneConfigOrExit } from './control-plane-commands.ts';
import { EXIT_USAGE } from './exit-codes.ts';
import { localIssuerOrExit } from './local-issuer.ts';

/** The dashboard address that signs in with a login link (the code rides in the fragment,
 * which browsers never send to a server, so it stays out of access logs). */
export function loginLinkUrl(dashboardUrl: string, code: string): string {
  return `${dashboardUrl.replace(/\/+$/, '')}/sign-in#link=${code}`;
}

/** `replix login-link`: a one-time dashboard sign-in link, signed by the built-in issuer. */
export function addLoginLinkCommand(program: Command): void {
  program
    .command('login-link')
    .description(
      `print a one-time dashboard sign-in link for the local control plane (valid ${LOGIN_LINK_TTL_SECONDS / 60} minutes)`,
    )
    .requiredOption('--email <email>', 'who signs in; each email is its own account')
    .option('--admin', 'member of the service-admins group (sees the Admin page)', false)
    .action(async (options: { email: string; admin: boolean }) => {
      const config = controlPlaneConfigOrExit('login-link');
      if (config.oidc) {
        process.stderr.write(
          'replix login-link: REPLIX_OIDC_ISSUER is set; users sign in with that identity provider.\n',
        );
        process.exit(1);
      }
      if (!/^[^@\s]+@[^@\s]+$/.test(options.email)) {
        process.stderr.write('replix login-link: --email must be an email address.\n');
        process.exit(EXIT_USAGE);
      }
      const issuer = await localIssuerOrExit('login-link', config.dataDir);
      const code = await issuer.signLoginLink({ email: options.email, admin: options.admin });
      const dashboardUrl = config.publicUrl ?? `http://127.0.0.1:${config.port}`;
      process.stdout.write(`${loginLinkUrl(dashboardUrl, code)}\n`);
    });
}
