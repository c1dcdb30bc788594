/**
 * An instance that exited or never became ready; the message quotes its log without secrets
 * and is fit for the deployment log.
 */
export class InstanceStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstanceStartError';
  }
}

/** The secrets a launch carries, to be blanked out of anything quoted from its logs. */
export function launchSecrets(launch: {
  readonly keySecretHex: string;
  readonly sourceUrl: string;
  readonly ssh: { readonly privateKey: string } | undefined;
}): string[] {
  const secrets = [launch.keySecretHex, launch.sourceUrl];
  try {
    const password = new URL(launch.sourceUrl).password;
    if (password) secrets.push(password, decodeURIComponent(password));
  } catch {}
  if (launch.ssh) secrets.push(launch.ssh.privateKey);
  return secrets.filter((secret) => secret.length >= 4);
}

export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) result = result.split(secret).join('***');
  return result;
}
