import { describe, expect, it } from 'vitest';
import {
  hasRole,
  minimumRole,
  TEAM_ROLES,
  type TeamRole,
} from '../src/application/identity/role-policy.ts';

/** The documented matrix (docs/control-plane/teams-and-2fa.md), one row per kind of route. */
const MATRIX: Array<[method: string, url: string, minimum: TeamRole]> = [
  // Reads: everyone in the account.
  ['GET', '/v1/databases', 'member'],
  ['GET', '/v1/databases/:id/instance', 'member'],
  ['GET', '/v1/connections/:id', 'member'],
  ['GET', '/v1/connections/:id/schema', 'member'],
  ['GET', '/v1/team/members', 'member'],
  ['GET', '/v1/team/invitations', 'member'],
  ['GET', '/v1/account/audit-log', 'member'],
  ['GET', '/v1/billing', 'member'],
  ['HEAD', '/v1/databases', 'member'],
  // Member writes: their own keys, notifications seen, their own second factor, accepting.
  ['POST', '/v1/management-keys', 'member'],
  ['DELETE', '/v1/management-keys/:id', 'member'],
  ['POST', '/v1/databases/:id/notifications/seen', 'member'],
  ['POST', '/v1/team/invitations/accept', 'member'],
  ['POST', '/v1/auth/2fa/enroll', 'member'],
  ['POST', '/v1/auth/2fa/confirm', 'member'],
  ['POST', '/v1/auth/2fa/verify', 'member'],
  ['DELETE', '/v1/auth/2fa', 'member'],
  // Every other write: admins.
  ['POST', '/v1/connections', 'admin'],
  ['POST', '/v1/connections/test-connection', 'admin'],
  ['POST', '/v1/connections/:id/test', 'admin'],
  ['PATCH', '/v1/connections/:id', 'admin'],
  ['DELETE', '/v1/connections/:id', 'admin'],
  ['POST', '/v1/databases', 'admin'],
  ['PATCH', '/v1/databases/:id', 'admin'],
  ['DELETE', '/v1/databases/:id', 'admin'],
  ['POST', '/v1/databases/:id/provision', 'admin'],
  ['POST', '/v1/databases/:id/terminate', 'admin'],
  ['POST', '/v1/databases/:id/pause-replication', 'admin'],
  ['POST', '/v1/databases/:dbId/api-keys', 'admin'],
  ['DELETE', '/v1/databases/:dbId/api-keys/:keyId', 'admin'],
  ['POST', '/v1/databases/:id/webhooks', 'admin'],
  ['POST', '/v1/team/invitations', 'admin'],
  ['DELETE', '/v1/team/invitations/:id', 'admin'],
  ['PATCH', '/v1/team/members/:userId', 'admin'],
  ['DELETE', '/v1/team/members/:userId', 'admin'],
  ['PUT', '/v1/some/route/added/later', 'admin'],
  // Money and terms: owners.
  ['POST', '/v1/billing/checkout', 'owner'],
  ['POST', '/v1/billing/overage', 'owner'],
  ['POST', '/v1/account/accept-tos', 'member'],
];

describe('the role policy', () => {
  it.each(MATRIX)('%s %s needs %s', (method, url, minimum) => {
    expect(minimumRole(method, url)).toBe(minimum);
    expect(minimumRole(method.toLowerCase(), url)).toBe(minimum);
  });

  it('ranks owner above admin above member', () => {
    const allowed = (role: TeamRole) => TEAM_ROLES.filter((minimum) => hasRole(role, minimum));
    expect(allowed('owner')).toEqual(['owner', 'admin', 'member']);
    expect(allowed('admin')).toEqual(['admin', 'member']);
    expect(allowed('member')).toEqual(['member']);
  });

  it('does not confuse a prefix with a longer path', () => {
    expect(minimumRole('POST', '/v1/billingx')).toBe('admin');
    expect(minimumRole('POST', '/v1/management-keys/:id/rotate')).toBe('admin');
  });
});
