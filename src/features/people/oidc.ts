import crypto from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { OidcConfig } from '../../config.js';
import { problems } from '../../http/problems.js';
import type { SecretBox } from '../../lib/secrets.js';

// Single sign-on with OpenID Connect: the authorization code flow with PKCE (RFC 7636, S256), a
// nonce and a state, and the id_token verified by `jose` against the provider's published keys
// (signature, issuer, audience, expiry; an unsigned token is refused because no key verifies
// `alg: none`). Nothing is kept on the server between the two legs: state, nonce and the PKCE
// verifier travel in a short-lived cookie sealed with the server's secret box.

export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

/** How long the sign-in may take at the provider. */
export const FLOW_TTL_MS = 10 * 60 * 1000;
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

export interface FlowState {
  state: string;
  nonce: string;
  verifier: string;
  started_at: number;
}

function random(): string {
  return crypto.randomBytes(32).toString('base64url');
}

const unauthorized = (why: string) => problems.unauthorized(`single sign-on failed: ${why}; start again from the sign-in page`);

export class OidcClient {
  readonly #config: OidcConfig;
  #discovery: Promise<Discovery> | null = null;
  #keys: ReturnType<typeof createRemoteJWKSet> | null = null;

  constructor(config: OidcConfig) {
    this.#config = config;
  }

  get config(): OidcConfig {
    return this.#config;
  }

  /** The provider's metadata, read once (a failed read is retried next time). */
  async discovery(): Promise<Discovery> {
    this.#discovery ??= fetchDiscovery(this.#config.issuer).catch((error: unknown) => {
      this.#discovery = null;
      throw error;
    });
    return this.#discovery;
  }

  /** The first leg: where to send the browser, and the sealed state for its cookie. */
  async start(secrets: SecretBox, redirectUri: string, now: number): Promise<{ location: string; sealed: string }> {
    const discovery = await this.discovery();
    const flow: FlowState = { state: random(), nonce: random(), verifier: random(), started_at: now };
    const challenge = crypto.createHash('sha256').update(flow.verifier).digest('base64url');
    const url = new URL(discovery.authorization_endpoint);
    const params = {
      response_type: 'code',
      client_id: this.#config.clientId,
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return { location: url.toString(), sealed: secrets.seal(JSON.stringify(flow)) };
  }

  /** The second leg: checks state, exchanges the code (with the PKCE verifier) and verifies the id_token. */
  async finish(
    secrets: SecretBox,
    sealed: string | undefined,
    given: { code?: string; state?: string },
    redirectUri: string,
    now: number,
  ): Promise<JWTPayload> {
    const flow = openFlow(secrets, sealed, now);
    if (!given.state || !given.code || !constantTimeEqual(given.state, flow.state))
      throw unauthorized('the answer does not belong to this browser’s sign-in (state)');
    const discovery = await this.discovery();
    const idToken = await this.#exchange(discovery, given.code, flow.verifier, redirectUri);
    this.#keys ??= createRemoteJWKSet(new URL(discovery.jwks_uri));
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(idToken, this.#keys, {
        issuer: discovery.issuer,
        audience: this.#config.clientId,
        algorithms: ALGORITHMS,
        clockTolerance: 30,
      }));
    } catch (error) {
      throw unauthorized(`the id_token was refused (${(error as { code?: string }).code ?? 'invalid'})`);
    }
    if (typeof claims.nonce !== 'string' || !constantTimeEqual(claims.nonce, flow.nonce)) throw unauthorized('the id_token’s nonce does not match');
    return claims;
  }

  async #exchange(discovery: Discovery, code: string, verifier: string, redirectUri: string): Promise<string> {
    const basic = Buffer.from(`${encodeURIComponent(this.#config.clientId)}:${encodeURIComponent(this.#config.clientSecret)}`).toString('base64');
    const response = await fetch(discovery.token_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }),
      signal: AbortSignal.timeout(10_000),
      redirect: 'error',
    });
    const body = (await response.json().catch(() => ({}))) as { id_token?: unknown };
    if (!response.ok || typeof body.id_token !== 'string') throw unauthorized(`the provider's token endpoint answered ${response.status} without an id_token`);
    return body.id_token;
  }
}

function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

function openFlow(secrets: SecretBox, sealed: string | undefined, now: number): FlowState {
  if (!sealed) throw unauthorized('this browser started no sign-in (its cookie is missing)');
  let flow: FlowState;
  try {
    flow = JSON.parse(secrets.open(sealed)) as FlowState;
  } catch {
    throw unauthorized('the sign-in cookie is not one this server sealed');
  }
  if (now - flow.started_at > FLOW_TTL_MS) throw unauthorized('the sign-in took longer than 10 minutes');
  return flow;
}

async function fetchDiscovery(issuer: string): Promise<Discovery> {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
  if (!response.ok) throw problems.unavailable(`the identity provider's discovery document answered ${response.status}`, 5);
  const document = (await response.json()) as Partial<Discovery>;
  const { authorization_endpoint, token_endpoint, jwks_uri } = document;
  if (!document.issuer || !authorization_endpoint || !token_endpoint || !jwks_uri)
    throw problems.unavailable("the identity provider's discovery document lacks endpoints", 5);
  // OpenID Connect Discovery §4.3: the issuer it names must be the one configured.
  if (document.issuer.replace(/\/+$/, '') !== issuer) throw problems.unavailable(`the identity provider names its issuer ${document.issuer}, not ${issuer}`, 5);
  return { issuer: document.issuer, authorization_endpoint, token_endpoint, jwks_uri };
}
