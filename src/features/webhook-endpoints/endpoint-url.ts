// An endpoint's URL is a secret (a Slack incoming-webhook URL is the credential itself, and a URL
// may carry user:password@): it is checked here once, at the API's edge, stored sealed, and shown
// in full only in the response that created it. Everywhere else it is masked: scheme, host and
// port, then "/…" and the path's last four characters when at least sixteen more stay hidden.
// No message built here quotes the URL, so a refused one never reaches a response or the log.
import { problems } from '../../http/problems.js';

const MASK = '…';
/** Characters of the path shown at the end of a masked URL, and how many must stay hidden for them to be. */
const SHOWN_TAIL = 4;
const HIDDEN_AT_LEAST = 16;

/** The URL parsed as a browser would, or null when WHATWG URL parsing refuses it. */
export function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** Why the URL cannot be an endpoint's (never quoting it), or null when it can. */
export function endpointUrlDefect(text: string): string | null {
  const url = parseUrl(text);
  if (!url) return 'is not a valid URL (an unclosed [ or a bad host, port or percent-escape)';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.hostname === '') return 'must name a host';
  if (url.port === '0') return 'must have a port from 1 to 65535';
  return null;
}

/** A 422 problem pointing at `pointer` when the URL cannot be an endpoint's. */
export function requireEndpointUrl(text: string, pointer = '/url'): void {
  const defect = endpointUrlDefect(text);
  if (defect) throw problems.validation([{ pointer, message: defect }]);
}

/** What GET, the list, the audit log and the admin UI show of an endpoint's URL. */
export function maskEndpointUrl(text: string): string {
  const url = parseUrl(text);
  if (!url) return MASK;
  const rest = `${url.pathname}${url.search}${url.hash}`.replace(/^\//, '');
  const origin = `${url.protocol}//${url.host}/`;
  if (rest === '') return origin;
  return rest.length >= SHOWN_TAIL + HIDDEN_AT_LEAST ? `${origin}${MASK}${rest.slice(-SHOWN_TAIL)}` : `${origin}${MASK}`;
}
