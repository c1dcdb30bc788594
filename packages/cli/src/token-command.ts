import { BuiltInIssuer } from '@replix/control-plane';
import type { Command } from 'commander';
import { controlPlaneConfigOrExit } from './control-plane-commands.ts';

/** `replix token`: a bearer token for the local control plane, signed by its built-in issuer. */
export function addTokenCommand(program: Command): void {
  program
    .command('token')
    .description('print a bearer token for the local control plane (its built-in issuer)')
    .requiredOption('--email <email>', 'whose token; each email is its own account')
    .option('--admin', 'member of the service-admins group (may use /v1/admin/*)', false)
    .option('--ttl <seconds>', 'lifetime in seconds', String(12 * 3600))
    .action(async (options: { email: string; admin: boolean; ttl: string }) => {
      const config = controlPlaneConfigOrExit('token');
      if (config.oidc) {
        process.stderr.write(
          'replix token: REPLIX_OIDC_ISSUER is set; get tokens from that identity provider.\n',
        );
        process.exit(1);
      }
      const ttlSeconds = Number(options.ttl);
      if (!Number.isInteger(ttlSeconds) || ttlSeconds < 60) {
        process.stderr.write('replix token: --ttl must be an integer of at least 60 seconds.\n');
        process.exit(1);
      }
      if (!/^[^@\s]+@[^@\s]+$/.test(options.email)) {
        process.stderr.write('replix token: --email must be an email address.\n');
        process.exit(1);
      }
      const issuer = await BuiltInIssuer.open(config.dataDir);
      process.stdout.write(
        `${await issuer.sign({ email: options.email, admin: options.admin, ttlSeconds })}\n`,
      );
    });
}
