// The address policy applied to the rendered Markdown's tokens: links, images and raw HTML.
// Inside a raw HTML tag (a body's own `<a href="{{url}}">`, or HTML a triple-stash value brought)
// escaping a merge value is not enough: one in a tag name or an unquoted attribute could add
// attributes, one in a URL attribute could bring a scheme, and one in an event-handler attribute
// is script, one in `srcdoc` is a document, one in `style` is CSS. So each tag holding a merge
// value (or an attribute that takes an address, markup or CSS) is rewritten before the values are
// put back, each attribute by what it takes (attribute-policy.ts, an allow-list), unquoted values
// quoted, and values in tag or attribute names dropped.
import type { Token } from 'marked';
import type { MergedValues } from '../../templates/engine.js';
import { attributeKind, policedStyle, refreshParts } from './attribute-policy.js';
import { decodeAttribute, encodeUrlText, isAllowedAddress, policedAddress, safeAddress } from './urls.js';

// A start tag with its attributes (quoted, unquoted or bare); group 1 the name, group 2 the attributes.
const START_TAG = /<([a-zA-Z][^\s/>]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)(\s*\/?)>/g;
const ATTRIBUTE = /(\s+)([^\s"'>/=]+)(?:(\s*=\s*)("[^"]*"|'[^']*'|[^\s"'=<>`]+))?/g;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

function unquoted(value: string): string {
  return value.startsWith('"') || value.startsWith("'") ? value.slice(1, -1) : value;
}

/** Puts the merge values back into text as they are (the address policy then judges the whole). */
function valuesOf(merged: MergedValues): (text: string) => string {
  return (text) => text.replace(merged.placeholder, (_match, index: string) => merged.values[Number(index)] ?? '');
}

/** Whether the tag is a `<meta http-equiv=refresh>`, whose `content` then holds an address. */
function isRefresh(name: string, attributes: string, merged: MergedValues): boolean {
  if (name.toLowerCase() !== 'meta') return false;
  const equiv = /\shttp-equiv\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+)/i.exec(attributes.replace(merged.placeholder, ''));
  return (
    equiv !== null &&
    decodeAttribute(unquoted(equiv[1] as string))
      .trim()
      .toLowerCase() === 'refresh'
  );
}

/**
 * A meta refresh's content whose URL the link policy allows, normalised; null (the attribute
 * dropped, so the page never refreshes) when it is not `<delay>; url=<address>` or the address is
 * refused: a refresh to `#` would reload the page again and again.
 */
function refreshContent(value: string, merged: MergedValues): string | null {
  const parts = refreshParts(valuesOf(merged)(decodeAttribute(value)));
  if (!parts) return null;
  if (parts.address === null) return parts.delay;
  return isAllowedAddress(parts.address) ? `${parts.delay}; url=${encodeUrlText(safeAddress(parts.address))}` : null;
}

/** The attribute as written back, or '' when it is dropped (attribute-policy.ts says which attribute takes what). */
function rewriteAttribute(name: string, rawValue: string, merged: MergedValues, refreshes: boolean): string {
  const value = unquoted(rawValue);
  switch (attributeKind(name.toLowerCase(), refreshes)) {
    case 'address': {
      // Body text is decoded as the browser decodes it; the values are literal text.
      const address = policedAddress(value, valuesOf(merged));
      return `${name}="${escapeAttribute(encodeUrlText(address))}"`;
    }
    case 'refresh': {
      const content = refreshContent(value, merged);
      return content === null ? '' : `${name}="${escapeAttribute(content)}"`;
    }
    case 'css': {
      const style = policedStyle(decodeAttribute(value.replace(merged.placeholder, '')));
      return style === '' ? '' : `${name}="${escapeAttribute(style)}"`;
    }
    case 'dropped':
      return '';
    case 'other':
      // An event handler is script and an unknown attribute may be anything: keep the body's text alone.
      return `${name}="${value.replace(merged.placeholder, '')}"`;
    case 'inert':
      // Quoted, the value's own quotes are escaped when it is put back and it cannot end the attribute.
      return rawValue.startsWith("'") ? `${name}=${rawValue}` : `${name}="${value}"`;
  }
}

function rewriteTag(tag: string, merged: MergedValues): string {
  START_TAG.lastIndex = 0;
  const match = START_TAG.exec(tag);
  if (!match || match[0].length !== tag.length) return tag.replace(merged.placeholder, '');
  const [, name = '', attributes = '', end = ''] = match;
  const refreshes = isRefresh(name, attributes, merged);
  const rewritten = attributes.replace(ATTRIBUTE, (_all, space: string, attribute: string, _equals?: string, value?: string) => {
    const cleanName = attribute.replace(merged.placeholder, '');
    if (cleanName === '') return '';
    if (cleanName.toLowerCase() === 'srcdoc') return '';
    if (value === undefined) return `${space}${cleanName}`;
    const written = rewriteAttribute(cleanName, value, merged, refreshes);
    return written === '' ? '' : `${space}${written}`;
  });
  return `<${name.replace(merged.placeholder, '')}${rewritten}${end}>`;
}

function holdsValue(text: string, merged: MergedValues): boolean {
  merged.placeholder.lastIndex = 0;
  const found = merged.placeholder.test(text);
  merged.placeholder.lastIndex = 0;
  return found;
}

/** Attributes policed even in a tag the body wrote alone: addresses, markup, redirects and CSS. */
const POLICED_ATTRIBUTE =
  /\s(?:href|src|action|formaction|xlink:href|data|poster|cite|background|codebase|ping|longdesc|manifest|srcset|srcdoc|style|http-equiv)\s*=/i;

/**
 * Raw HTML with every tag that holds a merge value rewritten (see the file comment); text
 * between tags keeps its placeholders, HTML-escaped when they are put back. URL attributes
 * written by the body alone go through the address policy too, so `javascript:` never survives.
 */
export function policedHtml(html: string, merged: MergedValues): string {
  return html.replace(/<[a-zA-Z](?:[^>"']|"[^"]*"|'[^']*')*>|<\/[^>]*>/g, (tag) => {
    if (tag.startsWith('</')) return tag.replace(merged.placeholder, '');
    if (holdsValue(tag, merged) || POLICED_ATTRIBUTE.test(tag)) return rewriteTag(tag, merged);
    return tag;
  });
}

/**
 * Applies the address policy to every link, image and raw HTML tag of the rendered Markdown, in
 * place, before any format is drawn: the html, text and pdf outputs all read these tokens.
 */
export function policeTokens(tokens: Token[], merged: MergedValues, walk: (tokens: Token[], visit: (token: Token) => void) => unknown): void {
  const resolve = valuesOf(merged);
  walk(tokens, (token) => {
    if (token.type === 'link' || token.type === 'image') token.href = policedAddress(token.href, resolve);
    else if (token.type === 'html') token.text = policedHtml(token.text, merged);
  });
}
