import { useLayoutEffect, useState, type MutableRef } from 'preact/hooks';

// Tiny helpers for the hand-written SVG charts: linear scales and "nice" tick values.

// Variant colours name variants, not outcomes: blues, purples and greys only, never red or green,
// which this UI keeps for "good" and "harm" in the metric's direction.
export const PALETTE = ['#1f6feb', '#8250df', '#0550ae', '#a475f9', '#3b4a5a', '#6639ba'];
export const CONTROL_COLOUR = '#6e7781';

/** A treatment's colour by its position among the treatments. */
export function colorOf(index: number): string {
  return PALETTE[index % PALETTE.length] ?? '#3b4a5a';
}

/** Each variant's colour: the control grey, the treatments in order from the palette. */
export function variantColours(variants: { variant_key: string; is_control: boolean }[]): Map<string, string> {
  const colours = new Map<string, string>();
  let next = 0;
  for (const variant of variants) colours.set(variant.variant_key, variant.is_control ? CONTROL_COLOUR : colorOf(next++));
  return colours;
}

/** The colours of "better", "worse" and "not yet clear" in the metric's direction. */
export const READING_COLOURS = { better: '#1a7f37', worse: '#cf222e', unclear: '#6e7781' } as const;

export function linear(domain: [number, number], range: [number, number]): (value: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (value) => r0 + ((value - d0) / span) * (r1 - r0);
}

/** Round tick values (1, 2 or 5 times a power of ten) covering the domain. */
export function ticks(domain: [number, number], count = 5): number[] {
  const [lo, hi] = domain;
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** The domain padded by a fraction on both sides, so marks do not touch the edges. */
export function padded(values: number[], fraction = 0.08): [number, number] {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return [0, 1];
  let lo = Math.min(...finite);
  let hi = Math.max(...finite);
  if (lo === hi) {
    const pad = Math.abs(lo) * 0.1 || 0.01;
    return [lo - pad, hi + pad];
  }
  const pad = (hi - lo) * fraction;
  lo -= pad;
  hi += pad;
  return [lo, hi];
}

/**
 * The chart's width in CSS pixels, so its viewBox matches the space it gets: text stays
 * readable on a phone instead of being scaled down with the drawing.
 */
export function useChartWidth(ref: MutableRef<HTMLElement | null>, fallback = 640): number {
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver((entries) => {
      const seen = entries[0]?.contentRect.width;
      if (seen) setWidth(Math.max(300, Math.min(760, Math.round(seen))));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return width;
}

/** Tick labels for a time axis, as precise as its span needs. */
export function timeLabel(t: number, span: number): string {
  const date = new Date(t);
  if (span < 2 * 60_000) return date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  if (span < 2 * 86_400_000) return date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });
  return date.toLocaleDateString('en-GB', { month: 'short', day: '2-digit' });
}
