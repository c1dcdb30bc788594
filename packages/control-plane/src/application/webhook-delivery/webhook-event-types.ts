import type { PlatformEventType } from '../../adapters/events/platform-events.ts';

/** The event types a subscription may subscribe to: the platform events of spec §6. */
export const WEBHOOK_EVENT_TYPES = [
  'build.completed',
  'build.failed',
  'instance.unhealthy',
  'instance.recovered',
] as const satisfies readonly PlatformEventType[];
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The event `POST …/webhooks/{webhookId}/test` sends. Not one of the subscribable types: it goes
 * to that one subscription whatever it subscribes to, and only when asked for.
 */
export const TEST_EVENT_TYPE = 'webhook.test';
