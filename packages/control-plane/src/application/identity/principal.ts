import { randomUUID } from 'node:crypto';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import {
  activeManagementKeyByHash,
  insertUserWithAccount,
  recordManagementKeyUsed,
  recordUserSeen,
  userById,
  userBySubject,
} from '../../adapters/store/user-store.ts';
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
  const existing = await userBySubject(db, identity.subject);
  if (existing) {
    if (existing.email !== identity.email || stale(existing.last_seen_at, now)) {
      await recordUserSeen(db, existing.id, now, identity.email);
    }
    return knownUser(existing);
  }
  return db
    .transaction()
    .execute(async (tx) => {
      const inserted = await insertUserWithAccount(tx, {
        accountId: randomUUID(),
        userId: randomUUID(),
        email: identity.email,
        subject: identity.subject,
        at: now,
      });
      if (inserted) return knownUser(inserted);
      // A concurrent first request made the user: roll back our account and use theirs.
      throw new RetryFirstSight();
    })
    .catch(async (error) => {
      if (!(error instanceof RetryFirstSight)) throw error;
      const user = await userBySubject(db, identity.subject);
      if (!user)
        throw new Error('The user made by a concurrent first request is not in the store.');
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
    const key = await activeManagementKeyByHash(db, hashManagementKey(credential));
    if (!key) return undefined;
    const now = new Date();
    if (stale(key.last_used_at, now)) {
      await recordManagementKeyUsed(db, key.id, now);
    }
    const user = await userById(db, key.user_id);
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
