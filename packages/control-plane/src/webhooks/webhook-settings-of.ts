import type { ControlPlaneConfig } from '../config.ts';
import type { WebhookSettings } from './webhook-settings.ts';

/** The webhook settings of a configuration (a section every decoded configuration has). */
export function webhookSettingsOf(config: ControlPlaneConfig): WebhookSettings {
  return config.webhooks;
}
