import process from 'node:process';
import type { Command } from 'commander';
import { cliEnvironment } from './cli-environment.ts';
import { controlPlaneConfigOrExit } from './control-plane-commands.ts';
import { localIssuerOrExit } from './local-issuer.ts';

/** A TOTP code is 6 digits; anything else is taken for a recovery code. */
function proofOf(otp: string): { code: string } | { recoveryCode: string } {
  return /^\s*\d{6}\s*$/.test(otp) ? { code: otp.trim() } : { recoveryCode: otp.trim() };
}

async function exchangeSecondFactor(
  apiUrl: string,
  token: string,
  otp: string,
): Promise<{ token: string } | { error: string }> {
  let response: Response;
  try {
    response = await fetch(new URL('/v1/auth/2fa/verify', apiUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(proofOf(otp)),
    });
  } catch {
    return {
      error: `could not reach the control plane at ${apiUrl} to check the code (is it running? set REPLIX_API_URL).`,
    };
  }
  const body = (await response.json().catch(() => ({}))) as {
    token?: string;
    error?: string;
    message?: string;
  };
  if (response.ok && typeof body.token === 'string') return { token: body.token };
  return { error: `${body.error ?? response.status}: ${body.message ?? 'the exchange failed.'}` };
}

/** `replix token`: a bearer token for the local control plane, signed by its built-in issuer. */
export function addTokenCommand(program: Command): void {
  program
    .command('token')
    .description('print a bearer token for the local control plane (its built-in issuer)')
    .requiredOption('--email <email>', 'whose token; each email is its own account')
    .option('--admin', 'member of the service-admins group (may use /v1/admin/*)', false)
    .option('--ttl <seconds>', 'lifetime in seconds', String(12 * 3600))
    .option(
      '--otp <code>',
      'a TOTP or recovery code: for users with two-factor authentication on, the running control plane (REPLIX_API_URL) exchanges the token for one carrying the second factor',
    )
    .action(async (options: { email: string; admin: boolean; ttl: string; otp?: string }) => {
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
      const issuer = await localIssuerOrExit('token', config.dataDir);
      const token = await issuer.sign({ email: options.email, admin: options.admin, ttlSeconds });
      if (options.otp === undefined) {
        process.stdout.write(`${token}\n`);
        return;
      }
      // The user's TOTP secret lives in the store, which a running control plane holds (PGlite
      // is single-process): ask its API to check the code and sign the second-factor token.
      const apiUrl = cliEnvironment().REPLIX_API_URL ?? `http://127.0.0.1:${config.port}`;
      const exchanged = await exchangeSecondFactor(apiUrl, token, options.otp);
      if ('error' in exchanged) {
        process.stderr.write(`replix token: ${exchanged.error}\n`);
        process.exit(1);
      }
      process.stdout.write(`${exchanged.token}\n`);
    });
}
