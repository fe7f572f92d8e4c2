/**
 * The benchmarks' baseline: a bare Fastify 5 server in its own process, with none of Verdict's
 * hooks, logging, validation or authentication. Every scenario is compared with this route on
 * the same Node in the same run, so a ratio shows what Verdict's whole stack costs (a route of
 * Verdict's own would pay the same global costs as the scenario and hide them).
 *
 * Run as a child process: `node --import tsx bench/lib/bare-fastify.ts PORT`; prints `ready`.
 */
import Fastify from 'fastify';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: bare-fastify.ts PORT');
  process.exit(2);
}

const app = Fastify({ logger: false });
// GET answers a small JSON document; POST parses the scenario's JSON body (Fastify's default
// parser, as any Fastify app would) and answers the same, so both sides of the ratio parse and
// serialise JSON.
app.get('/bare', async () => ({ ok: true }));
app.post('/bare', async (request) => ({ ok: request.body !== undefined }));

await app.listen({ port, host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
