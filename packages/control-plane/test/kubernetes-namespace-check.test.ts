import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  NamespaceUnavailableError,
  namespaceUnavailable,
} from '../src/adapters/drivers/kubernetes/namespace-check.ts';

const status = (code: number, details: object) =>
  new ApiException(code, 'failed', JSON.stringify({ kind: 'Status', code, details }), {});

describe('a write into a namespace the driver needs', () => {
  it('names the missing namespace and what to create', () => {
    const error = namespaceUnavailable(
      status(404, { name: 'replix-us-east-1', kind: 'namespaces' }),
      'replix-us-east-1',
    );
    expect(error).toBeInstanceOf(NamespaceUnavailableError);
    expect(error?.message).toMatch(
      /^The Kubernetes namespace "replix-us-east-1" is missing: create it with the Role and RoleBinding of deploy\/kubernetes/,
    );
  });

  it('reads a 403 as a namespace without its Roles (or not there: RBAC answers first)', () => {
    const error = namespaceUnavailable(status(403, {}), 'replix-eu-west-1');
    expect(error?.message).toContain('"replix-eu-west-1" is not writable by the control plane');
  });

  it('leaves other failures as they are', () => {
    // A 404 of something else (a Deployment gone) is not a missing namespace.
    expect(
      namespaceUnavailable(status(404, { name: 'replix-unrouted', kind: 'deployments' }), 'x'),
    ).toBeUndefined();
    expect(namespaceUnavailable(status(409, {}), 'x')).toBeUndefined();
    expect(namespaceUnavailable(new Error('socket hang up'), 'x')).toBeUndefined();
  });
});
