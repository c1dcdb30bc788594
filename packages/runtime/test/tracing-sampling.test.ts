import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { Type } from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/config-error.ts';
import { decodeEnvironment, type Environment } from '../src/config/decode-environment.ts';
import {
  TRACING_VARIABLE_SCHEMAS,
  type TracingSettings,
  tracingEnvironment,
  tracingSettingsFrom,
} from '../src/tracing/tracing-settings.ts';
import { inSpan, startTracing, type TracingHandle } from '../src/tracing-surface.ts';

/** The settings a process with tracing on decodes from `env`, as every process does. */
function settingsOf(env: Environment): TracingSettings {
  const variables = decodeEnvironment(Type.Object(TRACING_VARIABLE_SCHEMAS), {
    OTEL_TRACES_EXPORTER: 'otlp',
    ...env,
  });
  const settings = tracingSettingsFrom(variables, 'replix-test');
  if (!settings) throw new Error('tracing should be on');
  return settings;
}

let handle: TracingHandle | undefined;
afterEach(async () => {
  await handle?.shutdown();
  handle = undefined;
});

/** Runs `roots` traces of one span each under `env`'s sampler; the spans kept, by name. */
async function keptRoots(env: Environment, roots: number): Promise<string[]> {
  const exporter = new InMemorySpanExporter();
  handle = await startTracing(settingsOf(env), { exporter });
  for (let i = 0; i < roots; i++) await inSpan(`root ${i}`, {}, async () => {});
  return exporter.getFinishedSpans().map((span) => span.name);
}

/**
 * A trace id at `share` of the ratio sampler's range: the SDK folds the id's four 32-bit words
 * into one (XOR) and keeps the trace when it is below the ratio's share of 2^32.
 */
function traceparentAt(share: number, sampled: boolean): string {
  const word = Math.floor(share * 0xffffffff)
    .toString(16)
    .padStart(8, '0');
  return `00-${'0'.repeat(24)}${word}-00f067aa0ba902b7-0${sampled ? 1 : 0}`;
}

describe('OTEL_TRACES_SAMPLER and its argument', () => {
  it('keeps every trace by default and with always_on, none with always_off', async () => {
    expect(await keptRoots({}, 20)).toHaveLength(20);
    await handle?.shutdown();
    expect(await keptRoots({ OTEL_TRACES_SAMPLER: 'always_on' }, 20)).toHaveLength(20);
    await handle?.shutdown();
    expect(await keptRoots({ OTEL_TRACES_SAMPLER: 'always_off' }, 20)).toEqual([]);
  });

  it('traceidratio keeps the share of random trace ids its argument says, and 0 none', async () => {
    const kept = await keptRoots(
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' },
      2000,
    );
    // 2,000 random ids at 0.25: 500 expected, σ ≈ 19; ±100 is over five σ.
    expect(kept.length).toBeGreaterThan(400);
    expect(kept.length).toBeLessThan(600);
    await handle?.shutdown();
    expect(
      await keptRoots({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, 200),
    ).toEqual([]);
  });

  it('decides by the trace id: the same trace is kept or dropped alike everywhere', async () => {
    const exporter = new InMemorySpanExporter();
    handle = await startTracing(
      settingsOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' }),
      { exporter },
    );
    // A plain ratio sampler ignores the caller's flag and reads the id alone.
    await inSpan('low id', {}, async () => {}, { parent: traceparentAt(0.1, false) });
    await inSpan('high id', {}, async () => {}, { parent: traceparentAt(0.9, true) });
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['low id']);
  });

  it('the parent-based samplers follow the caller, and sample roots by their own rule', async () => {
    const exporter = new InMemorySpanExporter();
    handle = await startTracing(
      settingsOf({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }),
      { exporter },
    );
    await inSpan('root', {}, async () => {});
    await inSpan('sampled parent', {}, async () => {}, { parent: traceparentAt(0.9, true) });
    await inSpan('unsampled parent', {}, async () => {}, { parent: traceparentAt(0.1, false) });
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['sampled parent']);
    await handle.shutdown();
    expect(await keptRoots({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, 10)).toEqual([]);
  });

  it('refuses a sampler or an argument it does not know, naming the variable', () => {
    expect(() => settingsOf({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(
      new ConfigError(
        'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, not "jaeger_remote".',
      ),
    );
    for (const arg of ['1.5', '-0.1', 'half'])
      expect(() =>
        settingsOf({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: arg }),
      ).toThrow(/^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/);
  });
});

describe('OTEL_BSP_* (the batch span processor)', () => {
  it('decodes the four settings, with the SDK defaults when unset', () => {
    expect(settingsOf({}).batching).toEqual({
      scheduledDelayMillis: 5000,
      exportTimeoutMillis: 30_000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
    });
    expect(
      settingsOf({
        OTEL_BSP_SCHEDULE_DELAY: '200',
        OTEL_BSP_EXPORT_TIMEOUT: '1000',
        OTEL_BSP_MAX_QUEUE_SIZE: '100',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
      }).batching,
    ).toEqual({
      scheduledDelayMillis: 200,
      exportTimeoutMillis: 1000,
      maxQueueSize: 100,
      maxExportBatchSize: 10,
    });
  });

  it('refuses bad values naming the variable, and a batch larger than the queue', () => {
    for (const [name, value] of [
      ['OTEL_BSP_SCHEDULE_DELAY', '-1'],
      ['OTEL_BSP_EXPORT_TIMEOUT', '0'],
      ['OTEL_BSP_MAX_QUEUE_SIZE', 'many'],
      ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', '1.5'],
    ] as const) {
      expect(() => settingsOf({ [name]: value })).toThrow(ConfigError);
      expect(() => settingsOf({ [name]: value })).toThrow(new RegExp(`^${name} must be`));
    }
    expect(() =>
      settingsOf({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '200' }),
    ).toThrow(
      new ConfigError(
        'OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be at most OTEL_BSP_MAX_QUEUE_SIZE (100), not "200".',
      ),
    );
  });

  it('hands the sampler and batching on to the processes this one starts', () => {
    const env = tracingEnvironment(
      settingsOf({
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
        OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      }),
    );
    expect(env).toMatchObject({
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
      OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '512',
    });
    // What the child decodes from it is what this process runs with.
    const child = settingsOf(env);
    expect(child.sampling).toEqual({ sampler: 'parentbased_traceidratio', ratio: 0.1 });
    expect(child.batching?.maxQueueSize).toBe(4096);
  });
});
