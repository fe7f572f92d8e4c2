/**
 * Exact sums of doubles, their squares and their products (decisions §13: sums kept up to date by
 * differences applied millions of times must not drift). Every finite double is m * 2^e with an
 * integer m, and so is the product of two doubles, so a sum of them is exactly an integer times a
 * power of two: a BigInt and an exponent. Adding and subtracting are exact; the double is taken
 * once, when the sum is read, and the same set of terms gives the same result in any order.
 */
export interface Exact {
  /** The value is m * 2^e. */
  m: bigint;
  e: number;
}

export const ZERO: Exact = { m: 0n, e: 0 };

const TWO_53 = 2 ** 53;

/** Drops trailing zero bits of m, so equal values have one form (done when written, not on every add). */
function normalised(m: bigint, e: number): Exact {
  if (m === 0n) return ZERO;
  let mantissa = m;
  let exponent = e;
  while ((mantissa & 0xffffffffn) === 0n) {
    mantissa >>= 32n;
    exponent += 32;
  }
  while ((mantissa & 1n) === 0n) {
    mantissa >>= 1n;
    exponent += 1;
  }
  return { m: mantissa, e: exponent };
}

const view = new DataView(new ArrayBuffer(8));

/** The double x exactly, from its bits: sign, 52-bit fraction, exponent. */
export function exactOf(x: number): Exact {
  if (!Number.isFinite(x)) throw new Error(`an exact sum cannot hold ${x}`);
  if (Number.isInteger(x) && Math.abs(x) < TWO_53) return { m: BigInt(x), e: 0 };
  view.setFloat64(0, x);
  const high = view.getUint32(0);
  const biased = (high >>> 20) & 0x7ff;
  const fraction = (high & 0xfffff) * 2 ** 32 + view.getUint32(4);
  // Below 2^53 the mantissa is an exact double: one BigInt conversion.
  const mantissa = BigInt(biased === 0 ? fraction : fraction + TWO_53 / 2);
  return { m: high >>> 31 ? -mantissa : mantissa, e: biased === 0 ? -1074 : biased - 1075 };
}

/** x * y exactly. */
export function exactProduct(x: number, y: number): Exact {
  const product = x * y;
  // Integers whose product is below 2^53 multiply exactly in doubles.
  if (Number.isInteger(x) && Number.isInteger(y) && Math.abs(product) < TWO_53) return { m: BigInt(product), e: 0 };
  const a = exactOf(x);
  const b = exactOf(y);
  return { m: a.m * b.m, e: a.e + b.e };
}

export function exactAdd(a: Exact, b: Exact): Exact {
  if (a.m === 0n) return b;
  if (b.m === 0n) return a;
  if (a.e === b.e) return { m: a.m + b.m, e: a.e };
  const [low, high] = a.e < b.e ? [a, b] : [b, a];
  return { m: low.m + (high.m << BigInt(high.e - low.e)), e: low.e };
}

export function exactNegate(a: Exact): Exact {
  return { m: -a.m, e: a.e };
}

function bitLength(m: bigint): number {
  return (m < 0n ? -m : m).toString(16).length * 4;
}

/** The nearest double (to within 2^-60 relative: far inside the analysis's 1e-9). */
export function exactToNumber(a: Exact): number {
  let { m, e } = a;
  const excess = bitLength(m) - 64;
  if (excess > 0) {
    m >>= BigInt(excess);
    e += excess;
  }
  // Two steps, so that neither power of two overflows or underflows on its own.
  const half = Math.trunc(e / 2);
  return Number(m) * 2 ** half * 2 ** (e - half);
}

/** Text that parseExact reads back to the same value. */
export function formatExact(a: Exact): string {
  const { m, e } = normalised(a.m, a.e);
  return m === 0n ? '0' : `${m.toString(36)}p${e}`;
}

export function parseExact(text: string): Exact {
  if (text === '0') return ZERO;
  const at = text.lastIndexOf('p');
  const digits = text.slice(0, at);
  const negative = digits.startsWith('-');
  let m = 0n;
  for (const char of negative ? digits.slice(1) : digits) m = m * 36n + BigInt(parseInt(char, 36));
  return { m: negative ? -m : m, e: Number(text.slice(at + 1)) };
}
