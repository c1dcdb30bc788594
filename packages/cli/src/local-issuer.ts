import process from 'node:process';
import { BuiltInIssuer } from '@replix/control-plane/config';

/**
 * Why a command cannot sign with the data folder's built-in issuer: no control plane has used
 * the folder, so it has no key. Making one there would sign tokens that every running control
 * plane refuses with 401, so the command stops and says how to point it at the right folder.
 */
export function noSigningKeyMessage(dataDir: string): string {
  return (
    `no control plane has run on the data folder ${dataDir} (it has no signing key). ` +
    'Set REPLIX_DATA_DIR to the folder the running control plane uses (the "data folder" line of npm start), or start it first.'
  );
}

/** The built-in issuer of the local data folder, or the command ends with `noSigningKeyMessage`. */
export async function localIssuerOrExit(command: string, dataDir: string): Promise<BuiltInIssuer> {
  const issuer = await BuiltInIssuer.openExisting(dataDir);
  if (issuer) return issuer;
  process.stderr.write(`replix ${command}: ${noSigningKeyMessage(dataDir)}\n`);
  process.exit(1);
}
