/**
 * A process's configuration (environment, flags, files) is unusable. The one configuration
 * error of every Replix process: its message names the setting and is shown as it is.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
