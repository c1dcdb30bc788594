import { ApiError } from '../../domain/errors.ts';

/**
 * Refuses a private key the tunnel could not use (not a key, a public key, or one locked with a
 * passphrase), at write time rather than at the first deploy. `field` is the path to name.
 */
export async function assertUsablePrivateKey(text: string, field: string): Promise<void> {
  // Loaded by the first key (some 17 MB that a process without SSH sources never needs). ssh2 is
  // CommonJS and Node's ESM loader sees only some of its named exports (not `utils`).
  const { default: ssh2 } = await import('ssh2');
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
