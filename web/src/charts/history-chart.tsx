import { useRef } from 'preact/hooks';
import type { Snapshot } from '../types.js';
import { colorOf, linear, padded, ticks, timeLabel, useChartWidth } from './scale.js';

const HEIGHT = 280;
const M = { left: 64, right: 16, top: 12, bottom: 34 };

interface Point {
  t: number;
  mean: number;
  low: number;
  high: number;
}

function seriesOf(snapshots: Snapshot[]): Map<string, Point[]> {
  const series = new Map<string, Point[]>();
  for (const snapshot of snapshots) {
    const t = Date.parse(snapshot.computed_at);
    for (const variant of snapshot.per_variant) {
      const interval = variant.posterior.credible_interval_95;
      if (!interval || variant.posterior.mean === null) continue;
      const points = series.get(variant.variant_key) ?? [];
      points.push({ t, mean: variant.posterior.mean, low: interval[0], high: interval[1] });
      series.set(variant.variant_key, points);
    }
  }
  return series;
}

function timeDomain(points: Point[]): [number, number] {
  const times = points.map((p) => p.t);
  const domain: [number, number] = [Math.min(...times), Math.max(...times)];
  // A single snapshot still needs a span to draw against: an hour either side.
  return domain[0] === domain[1] ? [domain[0] - 3_600_000, domain[1] + 3_600_000] : domain;
}

function latestIntervals(series: Map<string, Point[]>, format: (value: number) => string): string {
  return [...series.keys()]
    .map((key) => {
      const last = series.get(key)?.at(-1);
      return last ? `${key} now ${format(last.low)} to ${format(last.high)}` : key;
    })
    .join('; ');
}

function VariantBand({ points, color, x, y }: { points: Point[]; color: string; x: (t: number) => number; y: (value: number) => number }) {
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
      <span class="hint">Line: posterior mean; band: 95% credible interval at each snapshot. Bands narrow as data accumulates.</span>
    </figcaption>
  );
}

/**
 * How each variant's 95% credible interval tightens from snapshot to snapshot: a shaded band
 * per variant with its posterior mean as a line, over the time of computation.
 */
export function HistoryChart({ snapshots, format }: { snapshots: Snapshot[]; format: (value: number) => string }) {
  const ref = useRef<HTMLElement>(null);
  const WIDTH = useChartWidth(ref);
  const series = seriesOf([...snapshots].sort((a, b) => Date.parse(a.computed_at) - Date.parse(b.computed_at)));
  if (series.size === 0) return <p class="muted">No snapshot has intervals yet.</p>;
  const all = [...series.values()].flat();
  const tDomain = timeDomain(all);
  const yDomain = padded(all.flatMap((p) => [p.low, p.high]));
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
        aria-label={`Credible intervals over ${snapshots.length} snapshots. ${latest}`}
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
    </figure>
  );
}
