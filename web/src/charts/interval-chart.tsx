import { useRef } from 'preact/hooks';
import { colorOf, CONTROL_COLOUR, linear, padded, ticks, useChartWidth } from './scale.js';

export interface IntervalRow {
  label: string;
  mean: number;
  low: number;
  high: number;
  isControl: boolean;
}

const RIGHT = 20;

/** Long variant keys are shortened in the chart (the table beside it has them whole). */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(1, max - 1))}…` : text;
}
const ROW = 38;
const TOP = 28;

/**
 * Each variant's posterior mean (dot) and 95% credible interval (bar) on one shared axis, with
 * the control's mean as a dashed reference line: overlap with the control is visible at a glance.
 */
export function IntervalChart({ rows, format, title }: { rows: IntervalRow[]; format: (value: number) => string; title: string }) {
  const ref = useRef<HTMLElement>(null);
  const WIDTH = useChartWidth(ref);
  const LABEL = Math.min(150, Math.round(WIDTH * 0.3));
  if (rows.length === 0) return <p class="muted">No intervals to draw yet.</p>;
  const domain = padded(rows.flatMap((row) => [row.low, row.high]));
  const x = linear(domain, [LABEL, WIDTH - RIGHT]);
  const height = TOP + rows.length * ROW + 8;
  const control = rows.find((row) => row.isControl);
  const summary = rows.map((row) => `${row.label}: ${format(row.mean)} (95% interval ${format(row.low)} to ${format(row.high)})`).join('; ');

  return (
    <figure class="chart" ref={ref}>
      <svg viewBox={`0 0 ${WIDTH} ${height}`} width={WIDTH} height={height} role="img" aria-label={`${title}. ${summary}`} data-testid="interval-chart">
        {ticks(domain, WIDTH < 500 ? 3 : 5).map((tick) => (
          <g key={tick}>
            <line x1={x(tick)} x2={x(tick)} y1={TOP - 6} y2={height - 4} class="grid" />
            <text x={x(tick)} y={TOP - 10} text-anchor="middle" class="tick">
              {format(tick)}
            </text>
          </g>
        ))}
        {control ? <line x1={x(control.mean)} x2={x(control.mean)} y1={TOP - 4} y2={height - 4} class="reference" /> : null}
        {rows.map((row, i) => {
          const y = TOP + i * ROW + ROW / 2;
          const color = row.isControl ? CONTROL_COLOUR : colorOf(rows.slice(0, i).filter((r) => !r.isControl).length);
          return (
            <g key={row.label}>
              <text x={LABEL - 10} y={y + 4} text-anchor="end" class="label">
                {clip(row.isControl && row.label !== 'control' ? `${row.label} (control)` : row.label, Math.floor(LABEL / 8))}
              </text>
              <line x1={x(row.low)} x2={x(row.high)} y1={y} y2={y} stroke={color} stroke-width={8} stroke-linecap="round" opacity={0.35} />
              <line x1={x(row.low)} x2={x(row.low)} y1={y - 8} y2={y + 8} stroke={color} stroke-width={2} />
              <line x1={x(row.high)} x2={x(row.high)} y1={y - 8} y2={y + 8} stroke={color} stroke-width={2} />
              <circle cx={x(row.mean)} cy={y} r={6} fill={color} class="interval-mean" data-variant={row.label} />
            </g>
          );
        })}
      </svg>
      <figcaption class="hint">Dot: posterior mean. Bar: 95% credible interval.{control ? ' Dashed line: the control’s mean.' : ''}</figcaption>
    </figure>
  );
}
