/**
 * Team roles and the one place that says which role each /v1 operation needs. The auth hook
 * (api/build-api.ts) applies it to every authenticated route except the service-admin ones
 * (`config.admin`), which the `service-admins` group governs instead. Rules that depend on the
 * data (only owners change owners, an account keeps an owner, members revoke only their own
 * management keys) live with the routes that know the data.
 * The matrix is documented in docs/control-plane/teams-and-2fa.md.
 */
export const TEAM_ROLES = ['owner', 'admin', 'member'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

const RANK: Record<TeamRole, number> = { member: 0, admin: 1, owner: 2 };

export function isTeamRole(value: string): value is TeamRole {
  return (TEAM_ROLES as readonly string[]).includes(value);
}

/** True when `role` is `minimum` or above it. */
export function hasRole(role: TeamRole, minimum: TeamRole): boolean {
  return RANK[role] >= RANK[minimum];
}

/**
 * State-changing operations a member may call: their own management keys, marking
 * notifications seen, their own second factor, accepting an invitation, and accepting the
 * terms of service for themselves (spec: the web app calls it on every user's first login).
 * Keys are `METHOD url-pattern` with Fastify's pattern syntax (`:id`).
 */
const MEMBER_WRITES: ReadonlySet<string> = new Set([
  'POST /v1/management-keys',
  'DELETE /v1/management-keys/:id',
  'POST /v1/databases/:id/notifications/seen',
  'POST /v1/team/invitations/accept',
  'POST /v1/account/accept-tos',
  'POST /v1/auth/2fa/enroll',
  'POST /v1/auth/2fa/confirm',
  'POST /v1/auth/2fa/verify',
  'DELETE /v1/auth/2fa',
]);

/** Operations only owners may call: the account's money. */
const OWNER_PREFIXES: readonly string[] = ['/v1/billing'];

/**
 * The lowest role that may call `method` on the route `url` (its pattern, e.g.
 * `/v1/databases/:id/provision`): reads are for everyone in the account; billing for owners; the listed member writes for members; every other write (including routes added
 * later, unless listed here) for admins and owners.
 */
export function minimumRole(method: string, url: string): TeamRole {
  const verb = method.toUpperCase();
  const key = `${verb} ${url}`;
  const ownerOnly = OWNER_PREFIXES.some((prefix) => url === prefix || url.startsWith(`${prefix}/`));
  if (verb === 'GET' || verb === 'HEAD' || verb === 'OPTIONS') return 'member';
  if (ownerOnly) return 'owner';
  if (MEMBER_WRITES.has(key)) return 'member';
  return 'admin';
}
