import { useRef } from 'preact/hooks';
import { percent } from '../format.js';
import { colorOf, CONTROL_COLOUR, useChartWidth } from './scale.js';

export interface FunnelStepBar {
  label: string;
  rate: number | null;
  interval: [number, number] | null;
  stepRate: number | null;
  conversions: number;
}

const ROW = 30;
const TOP = 8;
const RIGHT = 150;

/**
 * One variant's funnel: a bar per step, its length the share of the variant's units that got that
 * far (0 to 100%), a whisker for its 95% interval, and beside it the share that went on from the
 * step before. The drop-off between bars is the funnel's story, so every variant gets its own.
 */
export function FunnelChart({ variant, isControl, index, steps }: { variant: string; isControl: boolean; index: number; steps: FunnelStepBar[] }) {
  const ref = useRef<HTMLElement>(null);
  const width = useChartWidth(ref);
  const label = Math.min(160, Math.round(width * 0.3));
  const x = (value: number) => label + value * Math.max(10, width - label - RIGHT);
  const height = TOP + steps.length * ROW + 4;
  const color = isControl ? CONTROL_COLOUR : colorOf(index);
  const summary = steps
    .map((step) => `${step.label}: ${step.conversions} units, ${percent(step.rate, 1)} of all, ${percent(step.stepRate, 1)} of the step before`)
    .join('; ');
  return (
    <figure class="chart" ref={ref}>
      <figcaption>
        {variant}
        {isControl && variant !== 'control' ? ' (control)' : ''}
      </figcaption>
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        role="img"
        aria-label={`Funnel of ${variant}. ${summary}`}
        data-testid={`funnel-chart-${variant}`}
      >
        {steps.map((step, i) => {
          const y = TOP + i * ROW;
          const rate = step.rate ?? 0;
          return (
            <g key={`${i}-${step.label}`} data-step={i + 1}>
              <text x={label - 8} y={y + ROW / 2 + 4} text-anchor="end" class="label">
                {step.label}
              </text>
              <rect x={label} y={y + 4} width={Math.max(1, x(rate) - label)} height={ROW - 10} fill={color} opacity={0.75} class="funnel-bar" />
              {step.interval ? (
                <line x1={x(step.interval[0])} x2={x(step.interval[1])} y1={y + ROW / 2 - 1} y2={y + ROW / 2 - 1} stroke="currentColor" stroke-width={1.5} />
              ) : null}
              <text x={x(1) + 8} y={y + ROW / 2 + 4} class="tick">
                {`${percent(step.rate, 1)} · ${i === 0 ? 'of units' : `${percent(step.stepRate, 0)} of step ${i}`}`}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
