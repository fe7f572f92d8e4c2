// Merge values that land in a link address. Markdown and HTML escaping keep a value from
// breaking out of the address; these rules keep the address itself valid and harmless.

const SAFE_SCHEMES = /^(https?|mailto|tel):/i;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Percent-encodes what may not appear in a URL as written (spaces, quotes, angle brackets,
 * parentheses, non-ASCII) and keeps everything else, including existing %XX escapes.
 */
export function encodeUrlText(value: string): string {
  return value.replace(/[\s"'<>()\\^`{|}\u0080-\u{10ffff}]/gu, (char) =>
    // encodeURIComponent leaves ' ( ) alone, and they matter here (Markdown link syntax).
    char.length === 1 && char.charCodeAt(0) < 0x80 ? `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : encodeURIComponent(char),
  );
}

/** A value that starts an address may not bring a scheme such as javascript: or data:. */
export function safeUrlStart(value: string): string {
  const trimmed = value.trim();
  return SCHEME.test(trimmed) && !SAFE_SCHEMES.test(trimmed) ? '#' : trimmed;
}
