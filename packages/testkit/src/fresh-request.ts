import { request } from 'node:http';

/** An HTTP answer read whole. */
export interface FreshAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * One request on a connection of its own (no agent, `Connection: close`): with query threads
 * the kernel spreads new connections over the threads listening with `reusePort`, while a
 * kept-alive one would stay on one thread.
 */
export function freshRequest(
  url: string,
  path: string,
  init: {
    method?: string;
    key?: string;
    headers?: Record<string, string>;
    body?: string;
  } = {},
): Promise<FreshAnswer> {
  return new Promise((resolve, reject) => {
    const sent = request(
      new URL(path, url),
      {
        agent: false,
        method: init.method ?? 'GET',
        headers: {
          connection: 'close',
          ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
          ...init.headers,
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    sent.on('error', reject);
    sent.end(init.body);
  });
}
