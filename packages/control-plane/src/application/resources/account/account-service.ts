/** The caller's account and their acceptance of the terms of service. */

import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { accountPlan } from '../../../adapters/store/account-plan.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import type { Principal } from '../../identity/principal.ts';
import { accountUsage } from '../../payments/plan-usage.ts';
import { limitsResource } from '../billing/limits-resource.ts';
import { iso } from '../common-schemas.ts';
import {
  acceptedTos,
  accountRow,
  latestTosAcceptance,
  recordTosAcceptance,
} from './account-queries.ts';

/**
 * The caller's account: plan, role, terms acceptance (against `termsVersion`), limits (with the
 * control plane's `minPollInterval` floor when it has one), usage.
 */
export async function accountOf(
  db: StoreDb,
  principal: Principal,
  settings: { readonly termsVersion: string; readonly minPollInterval: number | undefined },
) {
  const { termsVersion, minPollInterval } = settings;
  const { accountId, userId, email, role, admin } = principal;
  const account = await accountRow(db, accountId);
  const plan = await accountPlan(db, accountId, minPollInterval);
  const latest = await latestTosAcceptance(db, userId);
  const current = await acceptedTos(db, userId, termsVersion);
  return {
    id: account.id,
    email: account.email,
    createdAt: iso(account.created_at),
    plan: plan.plan,
    user: { id: userId, email, role, admin },
    tosAcceptedVersion: latest?.version ?? null,
    tosAcceptedAt: iso(latest?.accepted_at ?? null),
    currentTosVersion: termsVersion,
    tosAccepted: current,
    limits: limitsResource(plan.limits),
    usage: await accountUsage(db, accountId),
  };
}

/** Records the caller's acceptance of `version`; accepting it again keeps the first. */
export async function acceptTos(
  db: StoreDb,
  { accountId, userId }: Pick<Principal, 'accountId' | 'userId'>,
  version: string,
  termsVersion: string,
) {
  await db.transaction().execute(async (tx) => {
    if (await recordTosAcceptance(tx, userId, accountId, version)) {
      await recordAudit(tx, {
        accountId,
        entityType: 'user',
        entityId: userId,
        eventType: 'account.tos_accepted',
        payload: { version, current: version === termsVersion },
      });
    }
  });
  return { ok: true, version };
}
