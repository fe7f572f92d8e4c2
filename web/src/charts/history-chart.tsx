import { useRef } from 'preact/hooks';
import { colorOf, linear, padded, ticks, timeLabel, useChartWidth } from './scale.js';

const HEIGHT = 280;
const M = { left: 64, right: 16, top: 12, bottom: 34 };

/** One treatment's lift against the control at one snapshot. */
export interface LiftPoint {
  t: number;
  mean: number;
  low: number;
  high: number;
}

function timeDomain(points: LiftPoint[]): [number, number] {
  const times = points.map((p) => p.t);
  const domain: [number, number] = [Math.min(...times), Math.max(...times)];
  // A single snapshot still needs a span to draw against: an hour either side.
  return domain[0] === domain[1] ? [domain[0] - 3_600_000, domain[1] + 3_600_000] : domain;
}

function latestIntervals(series: Map<string, LiftPoint[]>, format: (value: number) => string): string {
  return [...series.keys()]
    .map((key) => {
      const last = series.get(key)?.at(-1);
      return last ? `${key} now ${format(last.low)} to ${format(last.high)}` : key;
    })
    .join('; ');
}

function VariantBand({ points, color, x, y }: { points: LiftPoint[]; color: string; x: (t: number) => number; y: (value: number) => number }) {
  const only = points.length === 1 ? points[0] : undefined;
  if (only) {
    // One snapshot has no course to shade: its interval as a bar with caps, its mean as a dot.
    const cx = x(only.t);
    return (
      <g data-testid="single-interval">
        <line x1={cx} x2={cx} y1={y(only.low)} y2={y(only.high)} stroke={color} stroke-width={2} />
        <line x1={cx - 6} x2={cx + 6} y1={y(only.low)} y2={y(only.low)} stroke={color} stroke-width={2} />
        <line x1={cx - 6} x2={cx + 6} y1={y(only.high)} y2={y(only.high)} stroke={color} stroke-width={2} />
        <circle cx={cx} cy={y(only.mean)} r={4} fill={color} />
      </g>
    );
  }
  const band = [...points.map((p) => `${x(p.t)},${y(p.high)}`), ...[...points].reverse().map((p) => `${x(p.t)},${y(p.low)}`)].join(' ');
  return (
    <g>
      <polygon points={band} fill={color} opacity={0.15} stroke={color} stroke-opacity={0.4} />
      <polyline points={points.map((p) => `${x(p.t)},${y(p.mean)}`).join(' ')} fill="none" stroke={color} stroke-width={2} />
      {points.map((p) => (
        <circle key={p.t} cx={x(p.t)} cy={y(p.mean)} r={3} fill={color} />
      ))}
    </g>
  );
}

function HistoryLegend({ keys }: { keys: string[] }) {
  return (
    <figcaption>
      <ul class="legend">
        {keys.map((key, i) => (
          <li key={key}>
            <span class="swatch" style={{ background: colorOf(i) }} aria-hidden="true" />
            {key}
          </li>
        ))}
      </ul>
      <span class="hint">
        Line: each variant’s lift against the control; band: its 95% interval at each snapshot; solid line: no effect. Bands narrow as data accumulates.
      </span>
    </figcaption>
  );
}

/**
 * Each treatment's lift against the control over the snapshots: its 95% interval as a shaded
 * band and the mean as a line, around a solid line at zero (no effect).
 */
export function HistoryChart({ series, format, count }: { series: Map<string, LiftPoint[]>; format: (value: number) => string; count: number }) {
  const ref = useRef<HTMLElement>(null);
  const WIDTH = useChartWidth(ref);
  if (series.size === 0) return <p class="muted">No snapshot has an effect against the control yet.</p>;
  const all = [...series.values()].flat();
  const tDomain = timeDomain(all);
  const yDomain = padded([0, ...all.flatMap((p) => [p.low, p.high])]);
  const x = linear(tDomain, [M.left, WIDTH - M.right]);
  const y = linear(yDomain, [HEIGHT - M.bottom, M.top]);
  const keys = [...series.keys()];
  const xTicks = ticks(tDomain, WIDTH < 500 ? 2 : 4);
  const span = tDomain[1] - tDomain[0];
  const latest = latestIntervals(series, format);

  return (
    <figure class="chart" ref={ref}>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={WIDTH}
        height={HEIGHT}
        role="img"
        aria-label={`Lift against the control over ${count} snapshots. ${latest}`}
        data-testid="history-chart"
      >
        {ticks(yDomain).map((tick) => (
          <g key={`y${tick}`}>
            <line x1={M.left} x2={WIDTH - M.right} y1={y(tick)} y2={y(tick)} class="grid" />
            <text x={M.left - 6} y={y(tick) + 4} text-anchor="end" class="tick">
              {format(tick)}
            </text>
          </g>
        ))}
        <line x1={M.left} x2={WIDTH - M.right} y1={y(0)} y2={y(0)} stroke="#1f2328" stroke-width={1.5} />
        {xTicks.map((tick) => (
          <text key={`x${tick}`} x={x(tick)} y={HEIGHT - 12} text-anchor="middle" class="tick">
            {timeLabel(tick, span)}
          </text>
        ))}
        {keys.map((key, i) => (
          <VariantBand key={key} points={series.get(key) ?? []} color={colorOf(i)} x={x} y={y} />
        ))}
      </svg>
      <HistoryLegend keys={keys} />
      {all.every((point) => point.t === all[0]?.t) ? (
        <p class="muted" data-testid="one-snapshot">
          One snapshot so far: its intervals are shown as bars; the lines and bands fill in as more snapshots are computed.
        </p>
      ) : null}
    </figure>
  );
}
