import type { ControlPlaneConfig } from '../config.ts';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './webhook-settings.ts';

/** The webhook settings of a configuration (the defaults for one built without them). */
export function webhookSettingsOf(config: ControlPlaneConfig): WebhookSettings {
  return config.webhooks ?? DEFAULT_WEBHOOK_SETTINGS;
}
