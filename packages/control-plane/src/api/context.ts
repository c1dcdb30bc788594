import type { Logger } from 'pino';
import type { Driver } from '../adapters/drivers/driver.ts';
import type { PlatformEvents } from '../adapters/events/platform-events.ts';
import type { StoreDb } from '../adapters/store/open-store.ts';
import type { SecretBox } from '../adapters/store/secret-box.ts';
import type { BuiltInIssuer } from '../application/identity/built-in-issuer.ts';
import type { TokenVerifier } from '../application/identity/token-verifier.ts';
import type { ControlPlaneConfig } from '../config.ts';
import type { ControlPlaneMetrics } from '../roles/control-plane-metrics.ts';

/** What route handlers work with; one per control-plane process. */
export interface ApiContext {
  readonly db: StoreDb;
  readonly config: ControlPlaneConfig;
  readonly secrets: SecretBox;
  readonly verifyToken: TokenVerifier;
  /** Present when the built-in issuer is in use (the embedded default). */
  readonly issuer: BuiltInIssuer | undefined;
  readonly events: PlatformEvents;
  /** Runs instances (the `process` driver by default). */
  readonly driver: Driver;
  readonly log: Logger;
  /** This process's Prometheus metrics; absent in tests that build a context by hand. */
  readonly metrics?: ControlPlaneMetrics;
}
