// The helpers a template body may call, besides Handlebars' own if, unless, each, with and
// lookup. They are pure: the same arguments always give the same text, whatever the host's
// locale or time zone, so a frozen version renders the same everywhere (docs/templates.md).
import type { HelperOptions } from 'handlebars';
import { LRUCache } from 'lru-cache';

/** A failure caused by the template or its data: rendering again would fail the same way. */
export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

type Helper = (...args: unknown[]) => unknown;

const DEFAULT_LOCALE = 'en-US';

/** Splits Handlebars' trailing options argument from the positional ones. */
function split(args: unknown[]): { params: unknown[]; hash: Record<string, unknown> } {
  const options = args[args.length - 1] as HelperOptions | undefined;
  return { params: args.slice(0, -1), hash: (options?.hash ?? {}) as Record<string, unknown> };
}

function toNumber(helper: string, value: unknown): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) {
    throw new RenderError(`${helper}: ${JSON.stringify(value) ?? 'undefined'} is not a number`);
  }
  return number;
}

function optionalString(helper: string, name: string, value: unknown, fallback: string): string {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw new RenderError(`${helper}: ${name} must be a string`);
  return value;
}

// Building an Intl formatter costs far more than using one, and an invoice formats dozens of
// amounts with the same few settings.
const formatters = new LRUCache<string, Intl.NumberFormat | Intl.DateTimeFormat>({ max: 256 });

/** A cached formatter; Intl throws RangeError for an unknown locale, currency or zone: the caller's mistake. */
function intl<T extends Intl.NumberFormat | Intl.DateTimeFormat>(helper: string, key: string, make: () => T): T {
  const cached = formatters.get(key);
  if (cached) return cached as T;
  try {
    const formatter = make();
    formatters.set(key, formatter);
    return formatter;
  } catch (error) {
    throw new RenderError(`${helper}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

function toDate(value: unknown): Date {
  let date: Date | undefined;
  if (typeof value === 'number') date = new Date(value);
  // A bare date means that calendar day, not midnight in some time zone.
  else if (typeof value === 'string') date = new Date(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  if (!date || Number.isNaN(date.getTime())) {
    throw new RenderError(`formatDate: ${JSON.stringify(value) ?? 'undefined'} is not a date (ISO 8601 text or epoch milliseconds)`);
  }
  return date;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DATE_TOKENS = /\[([^\]]*)\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|HH|H|mm|ss/g;

function dateParts(date: Date, timeZone: string): Record<string, number> {
  const formatter = intl(
    'formatDate',
    `date|${timeZone}`,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }),
  );
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(date)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return parts;
}

/** `{{formatDate value "D MMMM YYYY" tz="Europe/Paris"}}`; default pattern YYYY-MM-DD, zone UTC. */
function formatDate(...args: unknown[]): string {
  const { params, hash } = split(args);
  const date = toDate(params[0]);
  const pattern = optionalString('formatDate', 'the pattern', params[1], 'YYYY-MM-DD');
  const p = dateParts(date, optionalString('formatDate', 'tz', hash.tz, 'UTC'));
  const pad = (n: number | undefined, width = 2) => String(n ?? 0).padStart(width, '0');
  const month = p.month ?? 1;
  const tokens: Record<string, string> = {
    YYYY: pad(p.year, 4),
    YY: pad((p.year ?? 0) % 100),
    MMMM: MONTHS[month - 1] ?? '',
    MMM: (MONTHS[month - 1] ?? '').slice(0, 3),
    MM: pad(month),
    M: String(month),
    DD: pad(p.day),
    D: String(p.day ?? 0),
    HH: pad(p.hour),
    H: String(p.hour ?? 0),
    mm: pad(p.minute),
    ss: pad(p.second),
  };
  return pattern.replace(DATE_TOKENS, (token: string, literal: string | undefined) => literal ?? tokens[token] ?? token);
}

/** `{{formatNumber value 2 locale="de-DE"}}`: grouping and a fixed number of decimals. */
function formatNumber(...args: unknown[]): string {
  const { params, hash } = split(args);
  const value = toNumber('formatNumber', params[0]);
  const decimals = params[1] === undefined ? undefined : toNumber('formatNumber', params[1]);
  if (decimals !== undefined && !(Number.isInteger(decimals) && decimals >= 0 && decimals <= 20)) {
    throw new RenderError('formatNumber: decimals must be an integer from 0 to 20');
  }
  const locale = optionalString('formatNumber', 'locale', hash.locale, DEFAULT_LOCALE);
  const digits = decimals === undefined ? {} : { minimumFractionDigits: decimals, maximumFractionDigits: decimals };
  return intl('formatNumber', `number|${locale}|${decimals ?? ''}`, () => new Intl.NumberFormat(locale, digits)).format(value);
}

/** `{{formatCurrency value "EUR" locale="fr-FR"}}`: the currency's own decimals and symbol. */
function formatCurrency(...args: unknown[]): string {
  const { params, hash } = split(args);
  const value = toNumber('formatCurrency', params[0]);
  const currency = params[1];
  if (typeof currency !== 'string' || !/^[A-Za-z]{3}$/.test(currency)) {
    throw new RenderError('formatCurrency: the second argument must be an ISO 4217 code such as "EUR"');
  }
  const locale = optionalString('formatCurrency', 'locale', hash.locale, DEFAULT_LOCALE);
  const code = currency.toUpperCase();
  return intl('formatCurrency', `currency|${locale}|${code}`, () => new Intl.NumberFormat(locale, { style: 'currency', currency: code })).format(value);
}

function text(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

const uppercase: Helper = (...args) => text(split(args).params[0]).toUpperCase();
const lowercase: Helper = (...args) => text(split(args).params[0]).toLowerCase();

/** `{{default value "n/a"}}`: the fallback when the value is missing, null or empty text. */
const fallback: Helper = (...args) => {
  const [value, otherwise] = split(args).params;
  return value === undefined || value === null || value === '' ? otherwise : value;
};

export const TEMPLATE_HELPERS: Readonly<Record<string, Helper>> = {
  formatDate,
  formatNumber,
  formatCurrency,
  uppercase,
  lowercase,
  default: fallback,
};
