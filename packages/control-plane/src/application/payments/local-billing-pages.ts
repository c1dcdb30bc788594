import { randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { accountEmailAndPlan } from '../../adapters/store/account-plan.ts';
import {
  applyBillingEvent,
  billingAccount,
  hasActiveSubscription,
} from '../../adapters/store/billing-ledger.ts';
import {
  type BillingSession,
  closeBillingSession,
  lockBillingSession,
  openBillingSession,
} from '../../adapters/store/billing-sessions.ts';
import type { Store } from '../../adapters/store/schema.ts';
import type { ApiServer } from '../../api/api-server.ts';
import type { ApiContext } from '../../api/context.ts';
import { asPlan } from '../../domain/plans.ts';
import { LOCAL_CHECKOUT_PATH, LOCAL_PORTAL_PATH } from './local-provider.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] as string);
}

/** A whole page; `body` is trusted HTML built here, every value in it escaped. */
function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
        '<meta name="viewport" content="width=device-width, initial-scale=1">' +
        '<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}' +
        'button{font-size:1rem;padding:.5rem 1.25rem;margin-right:.5rem}</style></head>' +
        `<body><h1>${escapeHtml(title)}</h1>${body}` +
        // The dashboard is served from the same address: the way back to its billing page.
        '<p><a href="/billing">Back to billing in the dashboard</a></p></body></html>',
    );
}

function form(action: string, buttons: Array<[value: string, label: string]>): string {
  return `<form method="post" action="${escapeHtml(action)}">${buttons
    .map(
      ([value, label]) =>
        `<button type="submit" name="action" value="${escapeHtml(value)}">${escapeHtml(label)}</button>`,
    )
    .join('')}</form>`;
}

type Problem = readonly [status: number, message: string];
const NOT_VALID: Problem = [404, 'This link is not valid.'];

function problemPage(reply: FastifyReply, [status, message]: Problem): FastifyReply {
  return page(reply, status, message, '');
}

/** Why a session's page cannot be used now, or undefined when it can. */
function unusable(session: BillingSession | undefined): Problem | undefined {
  if (!session) return NOT_VALID;
  if (session.expires_at.getTime() <= Date.now()) return [410, 'This link has expired.'];
  if (session.kind === 'checkout' && session.status !== 'open') {
    return [409, `This checkout is already ${session.status}.`];
  }
  return undefined;
}

interface PageAccount {
  readonly email: string;
  readonly plan: string;
}

/** A page's session (checkout or portal) and its account, or why the page cannot be used now. */
async function openPage(
  db: Kysely<Store>,
  token: string,
  kind: 'checkout' | 'portal',
): Promise<{ problem: Problem } | { session: BillingSession; account: PageAccount }> {
  const session = await openBillingSession(db, token, kind);
  const problem = unusable(session);
  if (problem || !session) return { problem: problem ?? NOT_VALID };
  const account = await accountEmailAndPlan(db, session.account_id);
  return { session, account };
}

interface TokenParams {
  token: string;
}
interface ActionBody {
  action?: string;
}

/**
 * The local payment provider's pages (the embedded default): a checkout page whose "Pay"
 * button completes the plan change, and a billing portal that can cancel the subscription or
 * record a renewal payment (for development: overage needs one). Server-rendered HTML, no
 * token needed: the unguessable, expiring token in the URL is the credential. Also
 * `/billing/return`, where a provider sends the user back.
 */
export function registerLocalBillingPages(app: ApiServer, context: ApiContext): void {
  const { db } = context;
  const billing = context.config.billing;
  const options = { config: { public: true }, schema: { hide: true } };

  app.register(async (pages) => {
    // An HTML form posts `application/x-www-form-urlencoded`; only these pages take it.
    pages.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );

    pages.get('/billing/return', options, (request, reply) => {
      const { checkout } = request.query as { checkout?: string };
      const text =
        checkout === 'success'
          ? 'Thank you: your payment went through. Your plan changes as soon as the payment provider confirms it.'
          : checkout === 'cancelled'
            ? 'The checkout was cancelled; nothing was charged.'
            : 'You can close this page.';
      return page(reply, 200, 'Replix billing', `<p>${escapeHtml(text)}</p>`);
    });

    if (billing.provider !== 'local') return;

    pages.get<{ Params: TokenParams }>(
      `${LOCAL_CHECKOUT_PATH}/:token`,
      options,
      async (request, reply) => {
        const opened = await openPage(db, request.params.token, 'checkout');
        if ('problem' in opened) return problemPage(reply, opened.problem);
        const { session, account } = opened;
        return page(
          reply,
          200,
          `Subscribe to ${asPlan(session.plan ?? '')}`,
          `<p>Account: ${escapeHtml(account.email)} (now on ${escapeHtml(account.plan)}).</p>` +
            '<p>This is the local test checkout: no payment is taken.</p>' +
            form(request.url, [
              ['pay', 'Pay'],
              ['cancel', 'Cancel'],
            ]),
        );
      },
    );

    pages.post<{ Params: TokenParams; Body: ActionBody | undefined }>(
      `${LOCAL_CHECKOUT_PATH}/:token`,
      options,
      async (request, reply) => {
        const pay = request.body?.action !== 'cancel';
        const outcome = await db.transaction().execute(async (tx) => {
          const session = await openBillingSession(tx, request.params.token, 'checkout');
          const locked = session ? await lockBillingSession(tx, session.id) : undefined;
          const problem = unusable(locked);
          if (problem || !locked) return { problem: problem ?? NOT_VALID };
          await closeBillingSession(tx, locked.id, pay ? 'completed' : 'cancelled');
          if (!pay) return { plan: undefined };
          const current = await billingAccount(tx, locked.account_id);
          await applyBillingEvent(tx, 'local', {
            kind: 'subscription_started',
            eventId: `checkout:${locked.id}`,
            accountId: locked.account_id,
            customerId: current?.customer_id ?? `local_cus_${locked.account_id}`,
            subscriptionId: `local_sub_${randomUUID()}`,
            plan: locked.plan,
          });
          return { plan: asPlan(locked.plan ?? '') };
        });
        if ('problem' in outcome) return problemPage(reply, outcome.problem ?? NOT_VALID);
        return outcome.plan
          ? page(
              reply,
              200,
              'Payment complete',
              `<p>Your plan is now <strong>${escapeHtml(outcome.plan)}</strong>.</p>`,
            )
          : page(reply, 200, 'Checkout cancelled', '<p>Nothing changed.</p>');
      },
    );

    pages.get<{ Params: TokenParams }>(
      `${LOCAL_PORTAL_PATH}/:token`,
      options,
      async (request, reply) => {
        const opened = await openPage(db, request.params.token, 'portal');
        if ('problem' in opened) return problemPage(reply, opened.problem);
        const { session, account } = opened;
        const current = await billingAccount(db, session.account_id);
        const active = hasActiveSubscription(current, 'local');
        return page(
          reply,
          200,
          'Billing portal',
          `<p>Account: ${escapeHtml(account.email)}, plan <strong>${escapeHtml(account.plan)}</strong>.</p>` +
            `<p>Subscription: ${active ? 'active' : 'none'}; renewal payments: ${current?.renewal_payments ?? 0}.</p>` +
            (active
              ? form(request.url, [
                  ['renew', 'Record a renewal payment (development)'],
                  ['cancel', 'Cancel subscription'],
                ])
              : ''),
        );
      },
    );

    pages.post<{ Params: TokenParams; Body: ActionBody | undefined }>(
      `${LOCAL_PORTAL_PATH}/:token`,
      options,
      async (request, reply) => {
        const action = request.body?.action;
        const outcome = await db.transaction().execute(async (tx) => {
          const session = await openBillingSession(tx, request.params.token, 'portal');
          const problem = unusable(session);
          if (problem || !session) return problem ?? NOT_VALID;
          const current = await billingAccount(tx, session.account_id);
          if (!current || !hasActiveSubscription(current, 'local')) {
            return [409, 'There is no active subscription.'] as Problem;
          }
          if (action !== 'renew' && action !== 'cancel') {
            return [400, 'Choose an action.'] as Problem;
          }
          await applyBillingEvent(
            tx,
            'local',
            action === 'renew'
              ? {
                  kind: 'renewal_paid',
                  eventId: `renewal:${randomUUID()}`,
                  customerId: current.customer_id,
                  subscriptionId: current.subscription_id,
                }
              : {
                  kind: 'subscription_ended',
                  eventId: `cancel:${randomUUID()}`,
                  customerId: current.customer_id,
                  subscriptionId: current.subscription_id,
                },
          );
          return [
            200,
            action === 'renew'
              ? 'A renewal payment was recorded.'
              : 'The subscription was cancelled; the account is on the free plan.',
          ] as Problem;
        });
        const [status, text] = outcome;
        return page(
          reply,
          status,
          status === 200 ? 'Done' : 'Not possible',
          `<p>${escapeHtml(text)}</p>`,
        );
      },
    );
  });
}
