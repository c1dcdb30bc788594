import { type KubernetesObject, ownedBy, secretData } from './kubernetes-object.ts';

/**
 * What one build Job may know of its source: the source URL with its password opened, and the
 * SSH tunnel's private key when the connection has one. Nothing else secret.
 *
 * Design note: the Job gets this credential, never `REPLIX_SECRET_KEY`, which opens every
 * tenant's stored password. The builder (which holds the key) opens the build's connection and
 * writes the result into a Secret of the Job's own, owned by the Job, so Kubernetes deletes it
 * with the Job, and the builder deletes it as soon as the build ends. We chose this over a
 * one-build token the Job would exchange with the control plane: it needs no new endpoint
 * reachable from Job pods and nothing in the Job's path can outlive the build; the price is
 * that the builder's account may create and delete Secrets in the build namespace (it reads
 * none).
 */
export interface BuildCredential {
  readonly sourceUrl: string;
  readonly sshPrivateKey?: string | undefined;
}

/** Opens the source credential of a build, or says why there is none (its database was deleted). */
export type BuildCredentialSource = (build: {
  readonly database_id: string;
}) => Promise<BuildCredential | string>;

/** The keys of the credential Secret, which are also the Job's variables (build-job.ts reads them). */
export const BUILD_SOURCE_URL_KEY = 'REPLIX_BUILD_SOURCE_URL';
export const BUILD_SSH_KEY_KEY = 'REPLIX_BUILD_SSH_PRIVATE_KEY';

/** The credential Secret of the Job named `jobName`. */
export function buildCredentialName(jobName: string): string {
  return `${jobName}-source`;
}

/** The Job's credential Secret, owned by the applied Job (deleting the Job deletes it). */
export function buildCredentialSecret(
  job: {
    readonly name: string;
    readonly namespace: string;
    readonly uid: string;
    readonly labels: Record<string, string>;
  },
  credential: BuildCredential,
): KubernetesObject {
  const entries: Record<string, string> = { [BUILD_SOURCE_URL_KEY]: credential.sourceUrl };
  if (credential.sshPrivateKey !== undefined) entries[BUILD_SSH_KEY_KEY] = credential.sshPrivateKey;
  return ownedBy(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: buildCredentialName(job.name),
        namespace: job.namespace,
        labels: job.labels,
      },
      type: 'Opaque',
      data: secretData(entries),
    },
    { apiVersion: 'batch/v1', kind: 'Job', name: job.name, uid: job.uid },
  );
}
