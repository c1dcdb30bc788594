import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

type Method = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * A request's logger, made only when the request writes a line. Fastify gives every request a
 * child logger (its request id, and the route's own level: queries log at warn), and a pino
 * child with its own level costs a few microseconds to make, more than a bare server spends on
 * a whole request; most requests write no line at all. Lines written are the same as the real
 * child's: it is made, with the same bindings and options, at the first line of its level.
 */
export class LazyChildLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#made().level = level;
  }

  isLevelEnabled(level: string): boolean {
    if (this.#child) return this.#child.isLevelEnabled(level);
    const values = this.#parent.levels.values;
    const threshold = values[this.level];
    const wanted = values[level];
    return threshold !== undefined && wanted !== undefined && wanted >= threshold;
  }

  bindings(): Bindings {
    return this.#made().bindings();
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.#made().child(bindings, options);
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }

  #write(method: Method, args: unknown[]): void {
    if (!this.isLevelEnabled(method)) return;
    (this.#made()[method] as (...line: unknown[]) => void)(...args);
  }

  #made(): Logger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }
}

/**
 * Fastify's `childLoggerFactory`: a `LazyChildLogger` in the place of each request's child.
 * For an app whose `loggerInstance` is a pino logger (the instance's is).
 */
export function lazyChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
