import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';

/** Where `npm run build:web` (run by `npm install`) writes the admin UI. */
export const WEB_DIST = path.resolve(import.meta.dirname, '..', '..', '..', 'web', 'dist');

const hidden = { config: { auth: 'public' as const }, schema: { hide: true } };

/** Every file of the build, by its path under /ui/; anything else under /ui/ is a client-side route. */
function listFiles(root: string): Set<string> {
  const files = new Set<string>();
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files.add(path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
  }
  return files;
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Verdict admin UI not built</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<h1>The admin UI has not been built</h1>
<p>This server serves the admin UI from <code>web/dist</code>, which does not exist yet.
<code>npm install</code> builds it; to build it by hand run <code>npm run build:web</code>, then restart the server.</p>
<p>The API itself works: see <a href="/docs">/docs</a>.</p>
</body></html>
`;

/**
 * Serves the admin UI at /ui from the Vite build: hashed assets are cached for a year, while
 * index.html (the answer for every client-side route) is revalidated so a new build shows at once.
 */
export function uiRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/', hidden, async (_request, reply) => reply.redirect('/ui/'));
    const built = fs.existsSync(path.join(WEB_DIST, 'index.html'));
    if (!built) {
      const notBuilt = async (_request: unknown, reply: FastifyReply) =>
        reply.code(503).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(NOT_BUILT);
      app.get('/ui', hidden, notBuilt);
      app.get('/ui/*', hidden, notBuilt);
      return;
    }
    const files = listFiles(WEB_DIST);
    await app.register(fastifyStatic, { root: WEB_DIST, serve: false });
    const sendIndex = (reply: FastifyReply) => reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    app.get('/ui', hidden, async (_request, reply) => sendIndex(reply));
    app.get<{ Params: { '*': string } }>('/ui/*', hidden, async (request, reply) => {
      const file = request.params['*'];
      if (file === '' || file === 'index.html' || !files.has(file)) return sendIndex(reply);
      const immutable = file.startsWith('assets/');
      return reply.sendFile(file, { cacheControl: true, immutable, maxAge: immutable ? 31_536_000_000 : 0 });
    });
  };
}
