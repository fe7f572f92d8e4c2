import { readingOf, type Reading } from './effect-chart.js';
import { linear, READING_COLOURS } from './scale.js';

const WIDTH = 160;
const HEIGHT = 18;

/**
 * One variant's lift in a scorecard cell: the 95% interval as a bar and the mean as a tick, on
 * the row's shared axis with a line at zero. Green when the whole interval is on the good side
 * in the metric's direction, red on the harmful side, grey while it straddles zero.
 */
export function LiftBar({
  mean,
  low,
  high,
  domain,
  higherIsBetter,
  label,
}: {
  mean: number;
  low: number;
  high: number;
  domain: [number, number];
  higherIsBetter: boolean;
  label: string;
}) {
  const reading: Reading = readingOf({ low, high }, higherIsBetter);
  const colour = READING_COLOURS[reading];
  const x = linear(domain, [4, WIDTH - 4]);
  return (
    <svg class="lift-bar" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} role="img" aria-label={label} data-reading={reading}>
      <line x1={x(0)} x2={x(0)} y1={0} y2={HEIGHT} stroke="#1f2328" stroke-width={1} />
      <rect x={x(low)} y={5} width={Math.max(2, x(high) - x(low))} height={8} rx={4} fill={colour} opacity={0.45} />
      <rect x={x(mean) - 1.5} y={2} width={3} height={14} fill={colour} />
    </svg>
  );
}
