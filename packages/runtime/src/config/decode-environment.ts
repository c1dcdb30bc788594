import type { StaticDecode, TObject, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ConfigError } from './config-error.ts';

/** The environment as a process receives it (`process.env`), or a test's stand-in. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * What a variable's schema carries besides its type (TypeBox keeps unknown options): `problem`
 * completes the sentence after the name for a bad value ("must be a positive integer"; a
 * variable any text satisfies needs none); `echo` quotes the bad value in it (never for
 * secrets); `description` is the meaning the docs give.
 */
export interface VariableOptions {
  readonly problem: string;
  readonly echo?: boolean;
  readonly description?: string;
}

function badValue(name: string, variable: TSchema, text: string): ConfigError {
  const { problem, echo } = variable as TSchema & Partial<VariableOptions>;
  const rule = problem ?? 'is not valid';
  return new ConfigError(`${name} ${rule}${echo ? `, not "${text}"` : ''}.`);
}

/**
 * Decodes the variables of `schema` from `env` once: an unset or empty variable takes its
 * schema's default (or stays undefined when optional); numbers are read as `Number` reads them;
 * each value is checked against its schema, then its codec (if any) turns it into the value the
 * process uses. The first bad value throws a ConfigError naming the variable.
 */
export function decodeEnvironment<Schema extends TObject>(
  schema: Schema,
  env: Environment,
): Readonly<StaticDecode<Schema>> {
  const required = new Set<string>(schema.required ?? []);
  const decoded: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const text = env[name];
    let value: unknown;
    if (text === undefined || text === '') {
      value = (variable as { default?: unknown }).default;
      if (value === undefined) {
        if (required.has(name)) throw new ConfigError(`${name} is required.`);
        continue;
      }
    } else {
      const type = (variable as { type?: unknown }).type;
      value = type === 'number' || type === 'integer' ? Number(text) : text;
      if (!Value.Check(variable, value)) throw badValue(name, variable, text);
    }
    decoded[name] = Value.Decode(variable, value);
  }
  return Object.freeze(decoded) as Readonly<StaticDecode<Schema>>;
}

/** The variables a schema reads, with their defaults as the environment would spell them. */
export function environmentReference(
  schema: TObject,
): ReadonlyArray<{ readonly name: string; readonly default: string | undefined }> {
  return Object.entries(schema.properties as Record<string, TSchema>).map(([name, variable]) => {
    const fallback = (variable as { default?: unknown }).default;
    return { name, default: fallback === undefined ? undefined : String(fallback) };
  });
}
