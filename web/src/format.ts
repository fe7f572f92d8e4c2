// Number and date formatting shared by the pages and charts. Numbers follow the metric's kind:
// rates in %, differences of rates in percentage points (pp), durations and amounts in the
// metric's unit, relative lifts in % with a "+" on gains, and one precision per metric so a
// column of numbers lines up.

const EN = 'en-US';

function finite(value: number | null | undefined): value is number {
  return value !== null && value !== undefined && Number.isFinite(value);
}

/** A sign for gains; losses carry their own minus (a true minus sign, so columns align). */
function signed(text: string, value: number): string {
  if (value > 0) return `+${text}`;
  return text.replace(/^-/, '−');
}

export function percent(value: number | null | undefined, digits = 1): string {
  if (!finite(value)) return '—';
  return `${(value * 100).toFixed(digits)}%`.replace(/^-/, '−');
}

/** A relative lift or other change as a share: "+17.4%", "−3.0%". */
export function lift(value: number | null | undefined, digits = 1): string {
  if (!finite(value)) return '—';
  const rounded = Number((value * 100).toFixed(digits));
  return signed(`${Math.abs(rounded) === 0 ? (0).toFixed(digits) : rounded.toFixed(digits)}%`, rounded);
}

/** A probability as a person reads it, never "100.0%" for something short of certain. */
export function chance(value: number | null | undefined): string {
  if (!finite(value)) return '—';
  if (value > 0.999) return '> 99.9%';
  if (value < 0.001) return '< 0.1%';
  return percent(value, 1);
}

export function number(value: number | null | undefined, digits = 4): string {
  if (!finite(value)) return '—';
  if (Number.isInteger(value)) return value.toLocaleString(EN);
  return Number(value.toPrecision(digits)).toLocaleString(EN, { maximumFractionDigits: 8 });
}

export function integer(value: number | null | undefined): string {
  return finite(value) ? Math.round(value).toLocaleString(EN) : '—';
}

/** A p-value with its "p": "p = 0.0123", and "p < 0.0001" below that (never "0.00e+0"). */
export function pValue(value: number | null | undefined): string {
  if (!finite(value)) return 'p not defined';
  if (value < 0.0001) return 'p < 0.0001';
  return `p = ${value.toFixed(4)}`;
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return date.toLocaleString('en-GB', { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit' });
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export type MetricKind = 'binary' | 'count' | 'revenue' | 'duration' | 'ratio' | 'quantile';

/** What formatting a metric's numbers needs: its kind, optional unit, and a typical value. */
export interface MetricScale {
  kind: MetricKind;
  unit?: string | null | undefined;
  /** A typical value (the control's mean), which fixes the precision of every number of the metric. */
  reference?: number | null | undefined;
}

/** Decimals that show about three significant digits of the reference, the same for every number of the metric. */
function decimalsFor(reference: number | null | undefined): number {
  if (!finite(reference) || reference === 0) return 2;
  const magnitude = Math.floor(Math.log10(Math.abs(reference)));
  return Math.min(4, Math.max(0, 2 - magnitude));
}

function withUnit(text: string, unit: string | null | undefined): string {
  return unit ? `${text} ${unit}` : text;
}

/** Formats a metric's values and its differences between variants, by the metric's kind. */
export interface MetricFormat {
  /** A per-unit value: "12.34%" for a rate, "1,424 ms" for a duration. */
  value(value: number | null | undefined): string;
  /** A difference of two values: "+2.71 pp" for rates, "+19 ms" for a duration. */
  difference(value: number | null | undefined): string;
  /** The name of what the metric counts per unit ("Converted units" only for rates). */
  countLabel: string;
}

export function metricFormat(scale: MetricScale): MetricFormat {
  if (scale.kind === 'binary') {
    return {
      value: (v) => percent(v, 2),
      difference: (v) => {
        if (!finite(v)) return '—';
        const points = Number((v * 100).toFixed(2));
        return `${signed((points === 0 ? 0 : points).toFixed(2), points)} pp`;
      },
      countLabel: 'Converted units',
    };
  }
  const decimals = decimalsFor(scale.reference);
  const plain = (v: number) => v.toLocaleString(EN, { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  return {
    value: (v) => (finite(v) ? withUnit(plain(v).replace(/^-/, '−'), scale.unit) : '—'),
    difference: (v) => {
      if (!finite(v)) return '—';
      const rounded = Number(v.toFixed(decimals));
      return withUnit(signed(plain(rounded === 0 ? 0 : v), rounded), scale.unit);
    },
    countLabel: 'Units with an event',
  };
}
