// ssh2 is CommonJS and Node's ESM loader sees only some of its named exports (not `utils`).
import ssh2 from 'ssh2';
import { ApiError } from '../../domain/errors.ts';

/**
 * Refuses a private key the tunnel could not use (not a key, a public key, or one locked with a
 * passphrase), at write time rather than at the first deploy. `field` is the path to name.
 */
export function assertUsablePrivateKey(text: string, field: string): void {
  const parsed = ssh2.utils.parseKey(text);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key instanceof Error || key === undefined) {
    const locked = key instanceof Error && /passphrase|encrypted/i.test(key.message);
    throw new ApiError(
      'validation_failed',
      locked
        ? `${field} is protected by a passphrase; give an unencrypted key.`
        : `${field} is not an OpenSSH or PEM private key.`,
    );
  }
  if (!key.isPrivateKey()) {
    throw new ApiError('validation_failed', `${field} is a public key; give the private key.`);
  }
}
