import { useRef } from 'preact/hooks';
import { chance, lift } from '../format.js';
import type { VariantPosterior } from '../types.js';
import { linear, padded, READING_COLOURS, ticks, useChartWidth } from './scale.js';

export interface EffectRow {
  label: string;
  /** Relative lift (variant / control - 1) when defined, else the absolute difference. */
  mean: number;
  low: number;
  high: number;
  relative: boolean;
  chance: number;
}

/** How the interval reads in the metric's direction: clearly better, clearly worse, or not yet clear. */
export type Reading = 'better' | 'worse' | 'unclear';

export function readingOf(row: Pick<EffectRow, 'low' | 'high'>, higherIsBetter: boolean): Reading {
  const above = row.low > 0;
  const below = row.high < 0;
  if (!above && !below) return 'unclear';
  return above === higherIsBetter ? 'better' : 'worse';
}

const COLOURS: Record<Reading, string> = READING_COLOURS;

export function effectRows(perVariant: VariantPosterior[]): EffectRow[] {
  return perVariant.flatMap((variant) => {
    const effect = variant.effect;
    if (!effect) return [];
    const relative = effect.relative.credible_interval_95 !== null && effect.relative.mean !== null;
    const interval = relative ? (effect.relative.credible_interval_95 as [number, number]) : effect.absolute.credible_interval_95;
    const mean = relative ? (effect.relative.mean as number) : effect.absolute.mean;
    return [{ label: variant.variant_key, mean, low: interval[0], high: interval[1], relative, chance: effect.chance_to_beat_control }];
  });
}

const ROW = 40;
const TOP = 28;
const CHANCE = 110;

/** The chart's text for screen readers: each variant's effect, interval, reading and chance. */
function effectSummary(rows: EffectRow[], higherIsBetter: boolean, show: (row: EffectRow, value: number) => string): string {
  return rows
    .map(
      (row) =>
        `${row.label}: ${show(row, row.mean)} (95% interval ${show(row, row.low)} to ${show(row, row.high)}), ${readingOf(row, higherIsBetter)}, chance to beat control ${chance(row.chance)}`,
    )
    .join('; ');
}

/** One variant's row: its name, interval bar with end marks, the mean's dot and its chance to beat control. */
function EffectRowMarks({
  row,
  y,
  x,
  label,
  chanceX,
  higherIsBetter,
}: {
  row: EffectRow;
  y: number;
  x: (value: number) => number;
  label: number;
  chanceX: number;
  higherIsBetter: boolean;
}) {
  const reading = readingOf(row, higherIsBetter);
  const colour = COLOURS[reading];
  return (
    <g data-reading={reading} data-testid={`effect-${row.label}`}>
      <text x={label - 10} y={y + 4} text-anchor="end" class="label">
        {row.label.length > label / 8 ? `${row.label.slice(0, Math.floor(label / 8) - 1)}…` : row.label}
      </text>
      <line x1={x(row.low)} x2={x(row.high)} y1={y} y2={y} stroke={colour} stroke-width={8} stroke-linecap="round" opacity={0.35} />
      <line x1={x(row.low)} x2={x(row.low)} y1={y - 8} y2={y + 8} stroke={colour} stroke-width={2} />
      <line x1={x(row.high)} x2={x(row.high)} y1={y - 8} y2={y + 8} stroke={colour} stroke-width={2} />
      <circle cx={x(row.mean)} cy={y} r={6} fill={colour} />
      <text x={chanceX} y={y + 4} class="label" fill={colour}>
        {chance(row.chance)}
      </text>
    </g>
  );
}

/**
 * A forest plot: each variant's effect against the control (relative lift when defined) with its
 * 95% interval, around a solid zero line. Green when the whole interval is on the good side (in
 * the metric's direction), red when on the bad side, grey while it still straddles zero; the
 * chance to beat control stands at the right.
 */
export function EffectChart({
  rows,
  higherIsBetter,
  title,
  format,
}: {
  rows: EffectRow[];
  higherIsBetter: boolean;
  title: string;
  format: (value: number) => string;
}) {
  const ref = useRef<HTMLElement>(null);
  const width = useChartWidth(ref);
  const label = Math.min(140, Math.round(width * 0.25));
  if (rows.length === 0) return <p class="muted">No effect to draw yet: the control and a variant need units first.</p>;
  const domain = padded([0, ...rows.flatMap((row) => [row.low, row.high])]);
  const x = linear(domain, [label, width - CHANCE]);
  const height = TOP + rows.length * ROW + 8;
  const show = (row: EffectRow, value: number) => (row.relative ? lift(value) : format(value));
  const summary = effectSummary(rows, higherIsBetter, show);
  const tickFormat = rows.every((row) => row.relative) ? (value: number) => lift(value, 0) : format;
  return (
    <figure class="chart" ref={ref}>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`${title}. ${summary}`} data-testid="effect-chart">
        {ticks(domain, width < 500 ? 3 : 5).map((tick) => (
          <g key={tick}>
            <line x1={x(tick)} x2={x(tick)} y1={TOP - 6} y2={height - 4} class="grid" />
            <text x={x(tick)} y={TOP - 10} text-anchor="middle" class="tick">
              {tickFormat(tick)}
            </text>
          </g>
        ))}
        <line x1={x(0)} x2={x(0)} y1={TOP - 4} y2={height - 4} class="zero" stroke="#1f2328" stroke-width={1.5} />
        <text x={width - CHANCE + 10} y={TOP - 10} class="tick">
          beats control
        </text>
        {rows.map((row, i) => (
          <EffectRowMarks
            key={row.label}
            row={row}
            y={TOP + i * ROW + ROW / 2}
            x={x}
            label={label}
            chanceX={width - CHANCE + 10}
            higherIsBetter={higherIsBetter}
          />
        ))}
      </svg>
      <figcaption class="hint">
        Dot: {rows.every((row) => row.relative) ? 'relative lift against the control' : 'difference from the control'}. Bar: 95% credible interval. Solid line:
        no effect. {higherIsBetter ? 'Higher is better' : 'Lower is better'} for this metric: green is a clear improvement, red a clear harm, grey not yet
        clear.
      </figcaption>
    </figure>
  );
}
