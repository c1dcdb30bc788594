import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiServer } from './api-server.ts';

/**
 * The built dashboard (`npm run build:dashboard` writes it; `npm ci` and `npm start` too). Found
 * beside this package, where it also is in the packed CLI (tools/pack-cli.ts), which carries
 * the built app but no `@replix/dashboard` package to resolve.
 */
export function dashboardDistDir(): string {
  return fileURLToPath(new URL('../../../dashboard/dist', import.meta.url));
}

/** The page shown until the dashboard is built; its style carries the page's CSP nonce. */
function notBuiltPage(nonce: string | undefined): string {
  const styleNonce = nonce === undefined ? '' : ` nonce="${nonce}"`;
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>Replix</title>
<style${styleNonce}>body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto }</style>
<body>
<h1>The dashboard is not built</h1>
<p>Run <code>npm run build:dashboard</code> (or <code>npm start</code>, which builds it) and reload.
The API is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</p></body></html>`;
}

/**
 * Serves the dashboard, a single-page app, at every path the API does not own: its hashed
 * assets for a year, and `index.html` (never cached) for any other page address, so links to
 * `/databases/…` work on reload.
 */
export async function registerDashboardSite(
  app: ApiServer,
  root = dashboardDistDir(),
): Promise<{
  /** Answers a GET the API has no route for with the app, when it is a page address. */
  servesPage(request: FastifyRequest): boolean;
  /** `nonce`: the page's CSP nonce, written on its script tag for the app to read. */
  sendPage(reply: FastifyReply, nonce?: string): FastifyReply | Promise<FastifyReply>;
}> {
  const built = existsSync(join(root, 'index.html'));
  if (built) {
    const assets = join(root, 'assets');
    // The plugin only adds reply.sendFile (which refuses paths outside its root); the route is
    // ours, so it can be public.
    await app.register(fastifyStatic, { root: assets, serve: false, cacheControl: false });
    app.get<{ Params: { '*': string } }>(
      '/assets/*',
      { config: { public: true }, schema: { hide: true } },
      (request, reply) => {
        // Vite names every asset by its content hash: cache them for good.
        reply.header('cache-control', 'public, max-age=31536000, immutable');
        return reply.sendFile(request.params['*'], assets);
      },
    );
  }
  return {
    servesPage(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const path = request.url.split('?')[0] ?? '';
      if (path.startsWith('/v1/') || path === '/v1' || path.startsWith('/.well-known/'))
        return false;
      return (request.headers.accept ?? '').includes('text/html') || path === '/';
    },
    async sendPage(reply, nonce) {
      reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
      if (!built) return reply.status(503).send(notBuiltPage(nonce));
      if (nonce === undefined) return reply.sendFile('index.html', root);
      // Read per answer (a few hundred bytes), so a rebuilt dashboard is served at once.
      const page = await readFile(join(root, 'index.html'), 'utf8');
      return reply.send(
        page.replaceAll('<script type="module"', `<script type="module" nonce="${nonce}"`),
      );
    },
  };
}
