import { describe, expect, it } from 'vitest';
import {
  ContainerConfigError,
  containerEnvironment,
  expandReferences,
} from '../src/kubernetes/container-env.ts';
import type { StoredObject } from '../src/kubernetes/object-store.ts';

const pod = {
  name: 'web-1',
  namespace: 'apps',
  uid: 'u1',
  podIP: '127.77.1.2',
  labels: { app: 'web' },
};
const secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'creds', namespace: 'apps', uid: 's', resourceVersion: '1' },
  data: { password: Buffer.from('pa$$').toString('base64') },
} as StoredObject;
const lookup = (kind: string, name: string) =>
  kind === 'Secret' && name === 'creds' ? secret : undefined;

describe('containerEnvironment', () => {
  it('resolves literals, references, Secret keys and pod fields in order', () => {
    const env = containerEnvironment(
      {
        envFrom: [{ secretRef: { name: 'creds' }, prefix: 'S_' }],
        env: [
          { name: 'HOST', value: 'db' },
          { name: 'URL', value: 'mysql://$(HOST)/x?$$(HOST)' },
          { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
          { name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          {
            name: 'GONE',
            valueFrom: { secretKeyRef: { name: 'creds', key: 'nope', optional: true } },
          },
        ],
      },
      pod,
      lookup,
    );
    expect(env).toEqual({
      S_password: 'pa$$',
      HOST: 'db',
      URL: 'mysql://db/x?$(HOST)',
      PASSWORD: 'pa$$',
      NAME: 'web-1',
      IP: '127.77.1.2',
      APP: 'web',
    });
  });

  it('refuses a missing key or Secret with the kubelet’s words', () => {
    const missingKey = {
      env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } }],
    };
    expect(() => containerEnvironment(missingKey, pod, lookup)).toThrow(
      new ContainerConfigError("couldn't find key token in Secret apps/creds"),
    );
    const missingSecret = {
      env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'other', key: 'k' } } }],
    };
    expect(() => containerEnvironment(missingSecret, pod, lookup)).toThrow(
      'secret "other" not found',
    );
  });

  it('leaves unknown references as they are', () => {
    expect(expandReferences('$(NOPE) $(A)', { A: 'a' })).toBe('$(NOPE) a');
  });
});
