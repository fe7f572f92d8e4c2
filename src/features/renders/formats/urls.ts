// The one URL policy of rendered documents: every address a render writes (a Markdown link or
// image, an autolink, a URL attribute of raw HTML) goes through `safeAddress` once it is whole,
// merge values included, so a value can neither bring its own scheme nor finish one the body began.

const ALLOWED_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);
const SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;
// Two slashes in any mix with backslashes (browsers read `\` as `/` in http(s) URLs): another host.
const PROTOCOL_RELATIVE = /^[\\/]{2}/;
// What the WHATWG URL parser drops before reading a scheme: leading and trailing C0 controls and
// spaces, and tabs and line breaks anywhere (so "\u0001java\tscript:" is "javascript:").
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const EDGE_CONTROLS = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;
const TAB_OR_NEWLINE = /[\t\n\r]/g;
const NUMERIC_OR_NAMED_ENTITY = /&(#[xX][0-9a-fA-F]+|#\d+|[a-zA-Z]+);?/g;
// The named references that spell characters of a scheme or its separators; letters and digits have none.
const NAMED = new Map([
  ['colon', ':'],
  ['tab', '\t'],
  ['newline', '\n'],
  ['sol', '/'],
  ['bsol', '\\'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
  ['lt', '<'],
  ['gt', '>'],
  ['period', '.'],
  ['plus', '+'],
  ['hyphen', '-'],
]);

/** An attribute value as the browser reads it: character references decoded (with or without `;`). */
export function decodeAttribute(value: string): string {
  return value.replace(NUMERIC_OR_NAMED_ENTITY, (entity, name: string) => {
    if (!name.startsWith('#')) return NAMED.get(name.toLowerCase()) ?? entity;
    const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
  });
}

/** The address as a browser's URL parser sees it before reading the scheme. */
export function browserNormalised(address: string): string {
  return address.replace(EDGE_CONTROLS, '').replace(TAB_OR_NEWLINE, '');
}

/**
 * Whether a render may write this (decoded) address: a scheme of http, https, mailto or tel, or a
 * relative address on the document's own host (`page`, `/path`, `#part`, `?q`); never another
 * scheme (javascript:, data:, vbscript:, file:, ...) nor a protocol-relative `//other.host`.
 */
export function isAllowedAddress(address: string): boolean {
  const normalised = browserNormalised(address);
  const scheme = SCHEME.exec(normalised);
  if (scheme) return ALLOWED_SCHEMES.has((scheme[1] as string).toLowerCase());
  return !PROTOCOL_RELATIVE.test(normalised);
}

/** The address normalised, or `#` (this document) when the policy refuses it. */
export function safeAddress(address: string): string {
  return isAllowedAddress(address) ? browserNormalised(address) : '#';
}

/**
 * Percent-encodes what may not appear in a URL as written (controls, spaces, quotes, angle
 * brackets, parentheses, non-ASCII) and keeps everything else, including existing %XX escapes.
 */
export function encodeUrlText(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what gets encoded
  return value.replace(/[\u0000-\u0020\u007f"'<>()\\^`{|}\u0080-\u{10ffff}]/gu, (char) =>
    // encodeURIComponent leaves ' ( ) alone, and they matter here (Markdown link syntax).
    char.length === 1 && char.charCodeAt(0) < 0x80 ? `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : encodeURIComponent(char),
  );
}

/**
 * The text to insert for a merge value that lands in an address after `before` (the address so
 * far, values already put back): the value percent-encoded, or `#` when the address it would
 * make is refused. Once `before` has fixed the scheme or the host, the value can change neither.
 */
export function addressValue(before: string, value: string): string {
  return isAllowedAddress(before + value) ? encodeUrlText(before === '' ? browserNormalised(value) : value) : '#';
}

/** Entity-like ampersands percent-encoded, so no later HTML escaping can leave one to be decoded. */
function withoutReferences(address: string): string {
  return address.replace(/&(?=#|[a-zA-Z0-9]+;)/g, '%26');
}

/**
 * An address as rendered, placeholders put back (`resolve`) and character references decoded as
 * the browser will decode them, through the policy: what the html, text and pdf outputs link to.
 */
export function policedAddress(address: string, resolve: (text: string) => string): string {
  return withoutReferences(safeAddress(resolve(decodeAttribute(address))));
}
