import { randomUUID } from 'node:crypto';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import { ADMIN_GROUP } from './built-in-issuer.ts';
import { hashManagementKey, MANAGEMENT_KEY_PREFIX } from './management-keys.ts';
import { isTeamRole, type TeamRole } from './role-policy.ts';
import type { Identity, TokenVerifier } from './token-verifier.ts';

/** Who is calling: every resource a call touches must belong to `accountId`. */
export interface Principal {
  readonly accountId: string;
  readonly userId: string;
  readonly email: string;
  /** Member of the identity provider's `service-admins` group. Management keys never are. */
  readonly admin: boolean;
  readonly via: 'token' | 'management_key';
  /** The management key used, when `via` is `management_key` (the audit log names it). */
  readonly managementKey?: { readonly id: string; readonly name: string } | undefined;
  /** The user's role in the account; a management key acts with its creator's current role. */
  readonly role: TeamRole;
  /**
   * The user has two-factor authentication on and this built-in token lacks the second factor:
   * only the exchange (POST /v1/auth/2fa/verify) accepts it.
   */
  readonly needsSecondFactor: boolean;
}

interface KnownUser {
  readonly userId: string;
  readonly accountId: string;
  readonly role: TeamRole;
  readonly twoFactor: boolean;
}

function knownUser(row: {
  id: string;
  account_id: string;
  role: string;
  totp_enabled_at: Date | null;
}): KnownUser {
  return {
    userId: row.id,
    accountId: row.account_id,
    // An unknown stored role is read as the least one.
    role: isTeamRole(row.role) ? row.role : 'member',
    twoFactor: row.totp_enabled_at !== null,
  };
}

const USER_COLUMNS = ['id', 'account_id', 'role', 'totp_enabled_at'] as const;

/**
 * How fresh "last seen" and "last used" times are kept: authentication runs on every request,
 * and a write per request would load the store for a timestamp nobody reads that finely.
 */
const ACTIVITY_RESOLUTION_MS = 60_000;

function stale(time: Date | null, now: Date): boolean {
  return time === null || now.getTime() - time.getTime() >= ACTIVITY_RESOLUTION_MS;
}

/** The user behind a token, made (with an account of their own) on first sight. */
async function userFor(db: StoreDb, identity: Identity): Promise<KnownUser> {
  const now = new Date();
  const existing = await db
    .selectFrom('users')
    .select([...USER_COLUMNS, 'email', 'last_seen_at'])
    .where('subject', '=', identity.subject)
    .executeTakeFirst();
  if (existing) {
    if (existing.email !== identity.email || stale(existing.last_seen_at, now)) {
      await db
        .updateTable('users')
        .set({ last_seen_at: now, email: identity.email })
        .where('id', '=', existing.id)
        .execute();
    }
    return knownUser(existing);
  }
  return db
    .transaction()
    .execute(async (tx) => {
      const accountId = randomUUID();
      const userId = randomUUID();
      await tx
        .insertInto('accounts')
        .values({
          id: accountId,
          email: identity.email,
          plan: 'free',
          created_at: now,
          updated_at: now,
        })
        .execute();
      const inserted = await tx
        .insertInto('users')
        .values({
          id: userId,
          account_id: accountId,
          email: identity.email,
          subject: identity.subject,
          created_at: now,
          last_seen_at: now,
          // The first user of an account owns it.
          role: 'owner',
        })
        .onConflict((oc) => oc.column('subject').doNothing())
        .returning(USER_COLUMNS)
        .executeTakeFirst();
      if (inserted) return knownUser(inserted);
      // A concurrent first request made the user: roll back our account and use theirs.
      throw new RetryFirstSight();
    })
    .catch(async (error) => {
      if (!(error instanceof RetryFirstSight)) throw error;
      const user = await db
        .selectFrom('users')
        .select(USER_COLUMNS)
        .where('subject', '=', identity.subject)
        .executeTakeFirstOrThrow();
      return knownUser(user);
    });
}

class RetryFirstSight extends Error {}

/** Resolves a bearer credential (an OIDC/built-in JWT or an `rmk_` key) to a principal. */
export async function authenticate(
  db: StoreDb,
  verifyToken: TokenVerifier,
  credential: string,
): Promise<Principal | undefined> {
  if (credential.startsWith(MANAGEMENT_KEY_PREFIX)) {
    const key = await db
      .selectFrom('management_keys')
      .select(['id', 'account_id', 'user_id', 'last_used_at', 'name'])
      .where('key_hash', '=', hashManagementKey(credential))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!key) return undefined;
    const now = new Date();
    if (stale(key.last_used_at, now)) {
      await db
        .updateTable('management_keys')
        .set({ last_used_at: now })
        .where('id', '=', key.id)
        .execute();
    }
    const user = await db
      .selectFrom('users')
      .select([...USER_COLUMNS, 'email'])
      .where('id', '=', key.user_id)
      .executeTakeFirst();
    // A key stops working when its creator leaves the account it was made in.
    if (!user || user.account_id !== key.account_id) return undefined;
    const { role } = knownUser(user);
    return {
      accountId: key.account_id,
      userId: key.user_id,
      email: user.email,
      admin: false,
      via: 'management_key',
      managementKey: { id: key.id, name: key.name },
      role,
      // Keys are made with a fully authenticated token; they are the second factor's output.
      needsSecondFactor: false,
    };
  }
  const identity = await verifyToken(credential);
  if (!identity) return undefined;
  const user = await userFor(db, identity);
  return {
    accountId: user.accountId,
    userId: user.userId,
    email: identity.email,
    admin: identity.groups.includes(ADMIN_GROUP),
    via: 'token',
    role: user.role,
    // The built-in 2FA guards built-in tokens only; OIDC providers run their own.
    needsSecondFactor: identity.builtIn && user.twoFactor && !identity.secondFactor,
  };
}
