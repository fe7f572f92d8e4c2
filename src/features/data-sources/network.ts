// Which hosts a data source may connect to: the outbound webhooks' rule (network-policy.ts), since
// a data source is an outbound connection chosen by a user. Checked when a source is saved (a
// hint, as DNS may change) and where each connection is made: a PostgreSQL source connects to
// the address that was checked, a ClickHouse one through a lookup that refuses private answers.
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { isRefusedAddress, PRIVATE_ADDRESS } from '../webhook-endpoints/network-policy.js';
import { guardedLookup, NO_PUBLIC_ADDRESS } from '../webhook-endpoints/sender.js';
import { SourceError } from './connectors/errors.js';

export const UNLESS_ALLOWED = 'refused unless VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS=1';

export interface NetworkPolicy {
  allowPrivateNetworks: boolean;
  connectTimeoutMs: number;
}

async function lookupWithin(host: string, timeoutMs: number): Promise<Array<{ address: string }>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SourceError('unreachable', `the host's DNS lookup took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([dns.lookup(host, { all: true }), timeout]).finally(() => clearTimeout(timer));
}

/**
 * The address to connect to for this host, checked: an IP literal as it is, a name by its DNS
 * answers (every one must be public). Never says what a name resolved to.
 */
export async function permittedAddress(host: string, policy: NetworkPolicy): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0) {
    if (!policy.allowPrivateNetworks && isRefusedAddress(bare)) throw new SourceError('refused', `the host is ${PRIVATE_ADDRESS}: ${UNLESS_ALLOWED}`);
    return bare;
  }
  const answers = await lookupWithin(bare, policy.connectTimeoutMs).catch((error: unknown) => {
    if (error instanceof SourceError) throw error;
    return [];
  });
  const first = answers[0];
  const refusal = `${NO_PUBLIC_ADDRESS}: ${UNLESS_ALLOWED}`;
  if (!first) throw policy.allowPrivateNetworks ? new SourceError('unreachable', 'the host name does not resolve') : new SourceError('refused', refusal);
  if (!policy.allowPrivateNetworks && answers.some((answer) => isRefusedAddress(answer.address))) throw new SourceError('refused', refusal);
  return first.address;
}

/** An HTTP agent whose connections are refused when the host has a private answer (unless allowed). */
export function guardedAgent(protocol: string, policy: NetworkPolicy): http.Agent {
  const options = { lookup: guardedLookup(policy.allowPrivateNetworks, policy.connectTimeoutMs), keepAlive: false };
  return protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

/** Why the source's URL is refused now by the network rule, or null (the connection checks again). */
export async function urlRefusal(host: string, policy: NetworkPolicy): Promise<string | null> {
  if (policy.allowPrivateNetworks) return null;
  try {
    await permittedAddress(host, policy);
    return null;
  } catch (error) {
    return error instanceof SourceError && error.reason === 'refused' ? error.message : null;
  }
}
