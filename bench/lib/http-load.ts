import autocannon from 'autocannon';

export interface ThroughputOptions {
  /** Base URL of the server, e.g. `http://127.0.0.1:1234`; `paths` are resolved against it. */
  url: string;
  /** Request paths (with query), rotated through in order by every connection. */
  paths: string[];
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  /** Concurrent keep-alive connections; 10 by default. */
  connections?: number;
  /** Measured seconds; 5 by default. */
  durationSeconds?: number;
  /** Unmeasured seconds first (JIT, pools, caches); 1 by default, 0 for none. */
  warmupSeconds?: number;
}

export interface ThroughputResult {
  requestsPerSecond: number;
  /** Latency percentiles of 2xx responses, in ms with sub-millisecond resolution. */
  p50Ms: number;
  p99Ms: number;
  /** Responses with a status outside 2xx: anything above 0 means the numbers are suspect. */
  non2xx: number;
  /** Connection errors and timeouts: likewise. */
  errors: number;
  /** Bytes read per 2xx response on the wire: status line, headers and body. */
  bytesPerResponse: number;
  /** Mean body size over `paths` (one plain request each before the run), e.g. for `--bytes`. */
  bodyBytes: number;
}

interface Run {
  result: autocannon.Result;
  latenciesMs: number[];
}

function runAutocannon(options: autocannon.Options): Promise<Run> {
  return new Promise((resolve, reject) => {
    const latenciesMs: number[] = [];
    const instance = autocannon(options, (error: unknown, result) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve({ result, latenciesMs });
    });
    // autocannon's own histogram counts whole milliseconds, too coarse for sub-ms servers:
    // keep every 2xx response time (high-resolution) and take percentiles ourselves.
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latenciesMs.push(responseTime);
    });
  });
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * Waits until the server has worked off what a run left behind. autocannon drops its in-flight
 * requests when time is up, but the server still answers them (a slow SQL query keeps MariaDB
 * busy for seconds), which would bleed into whatever is measured next. One request sent after
 * them queues behind them, so its answer means the backlog is (nearly) done.
 */
async function settle(options: ThroughputOptions): Promise<void> {
  const response = await fetch(new URL(options.paths[0]!, options.url), {
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    signal: AbortSignal.timeout(120_000),
  });
  await response.arrayBuffer();
}

/** The mean body size over `options.paths`, one plain request each. */
export async function meanBodyBytes(
  options: Pick<ThroughputOptions, 'url' | 'paths' | 'headers' | 'method' | 'body'>,
): Promise<number> {
  let total = 0;
  for (const path of options.paths) {
    const response = await fetch(new URL(path, options.url), {
      method: options.method ?? 'GET',
      headers: options.headers,
      body: options.body,
    });
    total += (await response.arrayBuffer()).byteLength;
  }
  return total / options.paths.length;
}

/**
 * Measures HTTP throughput with autocannon, in-process: the same client settings for every
 * server compared (connections, duration, warm-up, no pipelining), so their ratios are fair.
 * Each connection cycles through `paths`, so keyed scenarios do not hit one hot row.
 */
export async function measureThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  if (options.paths.length === 0) throw new Error('measureThroughput needs at least one path');
  const method = options.method ?? 'GET';
  const settings: autocannon.Options = {
    url: options.url,
    connections: options.connections ?? 10,
    pipelining: 1,
    requests: options.paths.map((path) => ({
      method,
      path,
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
    })),
  };
  const bodyBytes = await meanBodyBytes(options);
  const warmupSeconds = options.warmupSeconds ?? 1;
  if (warmupSeconds > 0) {
    await runAutocannon({ ...settings, duration: warmupSeconds });
    await settle(options);
  }
  const { result, latenciesMs } = await runAutocannon({
    ...settings,
    duration: options.durationSeconds ?? 5,
  });
  await settle(options);
  const sorted = Float64Array.from(latenciesMs).sort();
  const ok = result['2xx'];
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    non2xx: result.non2xx,
    errors: result.errors,
    bytesPerResponse: ok > 0 ? result.throughput.total / ok : 0,
    bodyBytes,
  };
}
