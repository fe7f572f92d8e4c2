// Which attributes of raw HTML may take what, by allow-list (see address-policy.ts for where it
// applies). An attribute is one of:
// - inert: its value is plain text to the browser (a class, a title, a width), so a merge value
//   may stand in it, escaped;
// - an address: its whole value goes through the link policy (urls.ts);
// - markup or a redirect: `srcdoc` (a whole document) is dropped; a `<meta http-equiv=refresh>`'s
//   `content` keeps its delay and sends its URL through the link policy;
// - CSS (`style`): merge values are dropped from it, and only declarations of known properties
//   whose values are plain words, numbers, colours and lengths are kept;
// - anything else (event handlers `on*`, unknown attributes): the body's own text is kept,
//   merge values are dropped.

/** Attributes whose value a browser follows or loads as a URL. */
export const URL_ATTRIBUTES = new Set([
  'href',
  'src',
  'action',
  'formaction',
  'xlink:href',
  'data',
  'poster',
  'cite',
  'background',
  'codebase',
  'ping',
  'longdesc',
  'manifest',
  'srcset',
]);

/** Attributes whose value is plain text to the browser: merge values may stand in them. */
const INERT_ATTRIBUTES = new Set([
  'abbr',
  'align',
  'alt',
  'bgcolor',
  'border',
  'cellpadding',
  'cellspacing',
  'char',
  'class',
  'color',
  'cols',
  'colspan',
  'datetime',
  'dir',
  'face',
  'headers',
  'height',
  'hreflang',
  'id',
  'label',
  'lang',
  'name',
  'nowrap',
  'placeholder',
  'rel',
  'reversed',
  'role',
  'rows',
  'rowspan',
  'scope',
  'size',
  'span',
  'start',
  'summary',
  'title',
  'translate',
  'type',
  'valign',
  'value',
  'width',
]);

export type AttributeKind = 'inert' | 'address' | 'refresh' | 'css' | 'dropped' | 'other';

/** What the attribute `name` (lower case) of a tag takes; `refreshes` tells a `<meta http-equiv=refresh>`. */
export function attributeKind(name: string, refreshes: boolean): AttributeKind {
  if (URL_ATTRIBUTES.has(name)) return 'address';
  if (name === 'srcdoc') return 'dropped';
  if (name === 'style') return 'css';
  if (name === 'content' && refreshes) return 'refresh';
  if (INERT_ATTRIBUTES.has(name) || name.startsWith('aria-') || (name.startsWith('data-') && name !== 'data')) return 'inert';
  return 'other';
}

/** CSS properties a style attribute may set: how text and boxes look, nothing that loads or generates content. */
const CSS_PROPERTIES = new Set([
  'color',
  'background-color',
  'font',
  'font-family',
  'font-size',
  'font-style',
  'font-weight',
  'font-variant',
  'line-height',
  'letter-spacing',
  'word-spacing',
  'text-align',
  'text-decoration',
  'text-transform',
  'text-indent',
  'white-space',
  'vertical-align',
  'direction',
  'display',
  'visibility',
  'width',
  'height',
  'min-width',
  'max-width',
  'min-height',
  'max-height',
  'margin',
  'margin-top',
  'margin-right',
  'margin-bottom',
  'margin-left',
  'padding',
  'padding-top',
  'padding-right',
  'padding-bottom',
  'padding-left',
  'border',
  'border-top',
  'border-right',
  'border-bottom',
  'border-left',
  'border-color',
  'border-style',
  'border-width',
  'border-radius',
  'border-collapse',
  'border-spacing',
  'float',
  'clear',
  'list-style-type',
  'opacity',
  'page-break-before',
  'page-break-after',
  'page-break-inside',
  'break-before',
  'break-after',
  'break-inside',
]);

/**
 * A declaration's value in plain words, numbers, lengths, percentages, hex colours and the colour
 * functions: no `url(`, no escapes (`\`), no other function, no comments, nothing that ends the
 * declaration or the attribute.
 */
const CSS_VALUE = /^(?:[\w\s#.,%+-]|(?:rgba?|hsla?)\([\d\s.,%/+-]*\))*$/i;

/** The style attribute's text (character references already decoded) with only the allowed declarations kept. */
export function policedStyle(style: string): string {
  return style
    .split(';')
    .flatMap((declaration) => {
      const colon = declaration.indexOf(':');
      if (colon === -1) return [];
      const property = declaration.slice(0, colon).trim().toLowerCase();
      const value = declaration.slice(colon + 1).trim();
      return CSS_PROPERTIES.has(property) && value !== '' && CSS_VALUE.test(value) ? [`${property}: ${value}`] : [];
    })
    .join('; ');
}

/** `<delay>; url=<address>` of a meta refresh, split; null when the content is not that shape. */
export function refreshParts(content: string): { delay: string; address: string | null } | null {
  const match = /^\s*(\d+(?:\.\d*)?)\s*(?:[;,]\s*(?:url\s*=\s*)?(?:'([^']*)'?|"([^"]*)"?|(.*)))?$/is.exec(content);
  if (!match) return null;
  const address = match[2] ?? match[3] ?? match[4];
  return { delay: match[1] as string, address: address === undefined ? null : address.trim() };
}
