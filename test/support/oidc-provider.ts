import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';

/** How the next id_token goes wrong (or not): what each OIDC refusal test asks of the provider. */
export type TokenFault = 'none' | 'wrong-audience' | 'wrong-issuer' | 'wrong-nonce' | 'expired' | 'unsigned' | 'foreign-key';

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The claims and the fault of the next id_token. */
  next: { claims: Record<string, unknown>; fault: TokenFault };
  /** Token requests refused for a wrong PKCE verifier or client secret. */
  refusals: string[];
  close(): Promise<void>;
}

interface Grant {
  nonce: string;
  challenge: string;
  redirectUri: string;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * A minimal OpenID Connect provider on a local port, built with `jose`: discovery, JWKS, an
 * authorization endpoint that approves at once, and a token endpoint that checks the client's
 * secret and the PKCE verifier (S256) and signs an RS256 id_token, or a faulty one on request.
 */
export async function startOidcProvider(): Promise<TestOidcProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const grants = new Map<string, Grant>();
  const clientId = 'verdict-test';
  const clientSecret = crypto.randomBytes(16).toString('hex');
  const provider = { clientId, clientSecret, next: { claims: {}, fault: 'none' as TokenFault }, refusals: [] as string[] } as TestOidcProvider;

  async function idToken(grant: Grant): Promise<string> {
    const { claims, fault } = provider.next;
    const now = Math.floor(Date.now() / 1000);
    const payload = { ...claims, nonce: fault === 'wrong-nonce' ? 'not-the-nonce' : grant.nonce };
    if (fault === 'unsigned') {
      return `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ ...payload, iss: provider.issuer, aud: clientId, iat: now, exp: now + 300 })}.`;
    }
    return new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
      .setIssuer(fault === 'wrong-issuer' ? 'https://evil.example.com' : provider.issuer)
      .setAudience(fault === 'wrong-audience' ? 'another-client' : clientId)
      .setIssuedAt(fault === 'expired' ? now - 7200 : now)
      .setExpirationTime(fault === 'expired' ? now - 3600 : now + 300)
      .sign(fault === 'foreign-key' ? foreign.privateKey : privateKey);
  }

  async function token(request: http.IncomingMessage, body: string): Promise<[number, unknown]> {
    const form = new URLSearchParams(body);
    const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    if (request.headers.authorization !== expected) return (provider.refusals.push('client'), [401, { error: 'invalid_client' }]);
    const grant = grants.get(form.get('code') ?? '');
    grants.delete(form.get('code') ?? '');
    const verifier = form.get('code_verifier') ?? '';
    if (!grant || crypto.createHash('sha256').update(verifier).digest('base64url') !== grant.challenge || form.get('redirect_uri') !== grant.redirectUri) {
      return (provider.refusals.push('grant'), [400, { error: 'invalid_grant' }]);
    }
    return [200, { access_token: 'opaque', token_type: 'Bearer', expires_in: 300, id_token: await idToken(grant) }];
  }

  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      void (async () => {
        const url = new URL(request.url ?? '/', provider.issuer);
        const json = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
        if (url.pathname === '/.well-known/openid-configuration') {
          return json(200, {
            issuer: provider.issuer,
            authorization_endpoint: `${provider.issuer}/authorize`,
            token_endpoint: `${provider.issuer}/token`,
            jwks_uri: `${provider.issuer}/jwks`,
            response_types_supported: ['code'],
            id_token_signing_alg_values_supported: ['RS256'],
            code_challenge_methods_supported: ['S256'],
          });
        }
        if (url.pathname === '/jwks') return json(200, { keys: [jwk] });
        if (url.pathname === '/authorize') {
          const code = crypto.randomBytes(16).toString('hex');
          const redirectUri = url.searchParams.get('redirect_uri') ?? '';
          if (url.searchParams.get('code_challenge_method') !== 'S256') return json(400, { error: 'PKCE S256 required' });
          grants.set(code, { nonce: url.searchParams.get('nonce') ?? '', challenge: url.searchParams.get('code_challenge') ?? '', redirectUri });
          const back = new URL(redirectUri);
          back.searchParams.set('code', code);
          back.searchParams.set('state', url.searchParams.get('state') ?? '');
          return response.writeHead(302, { location: back.toString() }).end();
        }
        if (url.pathname === '/token' && request.method === 'POST') return json(...(await token(request, body)));
        return json(404, { error: 'not_found' });
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  provider.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider.close = () => new Promise((resolve) => server.close(() => resolve()));
  return provider;
}
