import { useState } from 'preact/hooks';
import { Select, Table } from '../components/ui.js';
import { chance, integer, pValue } from '../format.js';
import type { Breakdown, BreakdownValue, Snapshot } from '../types.js';
import type { MetricView } from './results-model.js';
import { liftOf, liftText } from './results-scorecard.js';

/** The anchor of one slice's row, so the SRM warning can point at it. */
export function sliceId(dimension: string, index: number): string {
  return `slice-${dimension.replace(/[^A-Za-z0-9_-]/g, '_')}-${index}`;
}

interface FlaggedSlice {
  dimension: string;
  value: string;
  id: string;
  p: number;
}

/** Slices whose own SRM test fails, the most extreme first: where a broken split comes from. */
export function srmSlices(snapshot: Snapshot): FlaggedSlice[] {
  return (snapshot.breakdowns ?? [])
    .flatMap((breakdown) =>
      breakdown.values.flatMap((value, index) =>
        value.srm_warning
          ? [{ dimension: breakdown.dimension, value: value.value, id: sliceId(breakdown.dimension, index), p: value.srm_chi_squared_p ?? 1 }]
          : [],
      ),
    )
    .sort((a, b) => a.p - b.p);
}

/** A slice value as a person knows it: the API key's name for source, the value itself otherwise. */
export type SliceNamer = (dimension: string, value: BreakdownValue) => string;

function dimensionTitle(dimension: string): string {
  return dimension === 'source' ? 'source (the API key that logged the exposure)' : dimension;
}

/** At the top of the results: the SRM warning, and the slice that explains it. */
export function SrmSliceWarning({
  snapshot,
  onShowSlice,
  nameOf,
}: {
  snapshot: Snapshot;
  onShowSlice: (dimension: string, id: string) => void;
  nameOf: SliceNamer;
}) {
  if (!snapshot.srm_warning) return null;
  const flagged = srmSlices(snapshot);
  const first = flagged[0];
  const firstValue = first ? snapshot.breakdowns.find((b) => b.dimension === first.dimension)?.values.find((v) => v.value === first.value) : undefined;
  return (
    <div class="warning" role="alert" data-testid="srm-slice-warning">
      <strong>Sample ratio mismatch ({pValue(snapshot.srm_chi_squared_p)}).</strong> The split of units between variants does not match the weights: something
      drops or duplicates units in one variant, so distrust these results until the cause is found.{' '}
      {first && firstValue ? (
        <>
          The split is most broken in{' '}
          <a
            href={`#${first.id}`}
            onClick={(event) => {
              event.preventDefault();
              onShowSlice(first.dimension, first.id);
            }}
            data-testid="srm-slice-link"
          >
            {first.dimension} = {nameOf(first.dimension, firstValue)}
          </a>
          {flagged.length > 1 ? ` (and ${flagged.length - 1} more slice${flagged.length > 2 ? 's' : ''} marked SRM)` : ''}.
        </>
      ) : (
        'No single slice explains it: the cause is not tied to one dimension value or API key.'
      )}
    </div>
  );
}

/**
 * A slice's significant effect: the treatment whose chance is furthest from a coin flip, and its
 * direction; the badge names that treatment when there are several.
 */
function significantReading(value: BreakdownValue): { reading: 'better' | 'worse'; variant: string | null; treatments: number } {
  const chances = value.per_variant.flatMap((v) => (v.effect && !v.is_control ? [{ variant: v.variant_key, chance: v.effect.chance_to_beat_control }] : []));
  const extreme = chances.sort((a, b) => Math.abs(b.chance - 0.5) - Math.abs(a.chance - 0.5))[0];
  return { reading: (extreme?.chance ?? 0.5) >= 0.5 ? 'better' : 'worse', variant: extreme?.variant ?? null, treatments: chances.length };
}

function EffectCell({ value, metric }: { value: BreakdownValue; metric: MetricView }) {
  const treatments = value.per_variant.filter((variant) => !variant.is_control);
  const cells = treatments.flatMap((variant) => {
    const cell = liftOf(variant.effect);
    return cell ? [{ variant: variant.variant_key, cell }] : [];
  });
  if (cells.length === 0) return <td class="muted">—</td>;
  return (
    <td>
      {cells.map(({ variant, cell }) => {
        const text = liftText(cell, metric);
        return (
          <div key={variant} data-testid="slice-lift">
            {treatments.length > 1 ? <span class="muted">{variant}: </span> : null}
            <strong>{text.mean}</strong> <span class="muted">({text.interval})</span>, chance to beat control {chance(cell.chance)}
          </div>
        );
      })}
    </td>
  );
}

function BreakdownTable({ breakdown, metric, nameOf }: { breakdown: Breakdown; metric: MetricView; nameOf: SliceNamer }) {
  const title = `By ${dimensionTitle(breakdown.dimension)}`;
  return (
    <Table caption={title} columns={['Value', 'Units', `Lift on ${metric.name} (95% interval)`, 'SRM', 'Marks']}>
      {breakdown.values.map((value, index) => {
        const significant = value.significant_after_correction ? significantReading(value) : null;
        const reading = significant?.reading ?? null;
        const who = significant && significant.treatments > 1 && significant.variant ? `${significant.variant}: ` : '';
        return (
          <tr
            key={value.value}
            id={sliceId(breakdown.dimension, index)}
            tabIndex={-1}
            class={value.srm_warning ? 'slice-srm' : undefined}
            data-testid="breakdown-row"
          >
            <th scope="row">{nameOf(breakdown.dimension, value)}</th>
            <td>{integer(value.units)}</td>
            <EffectCell value={value} metric={metric} />
            <td>{pValue(value.srm_chi_squared_p)}</td>
            <td>
              {value.srm_warning ? <span class="badge badge-srm">SRM</span> : null}{' '}
              {reading ? (
                <span class={`badge badge-significant-${reading}`} data-reading={reading} data-testid="significant-badge">
                  {who}significant {reading === 'better' ? 'gain' : 'harm'} after correction
                </span>
              ) : null}
            </td>
          </tr>
        );
      })}
    </Table>
  );
}

/** The metrics that can be broken down: the primary (the snapshot's `breakdowns`), then each guardrail and secondary metric. */
function brokenDownMetrics(snapshot: Snapshot, views: readonly MetricView[]): Array<{ view: MetricView; breakdowns: Breakdown[] }> {
  const primary = views.find((view) => view.role === 'primary');
  const others = (snapshot.metric_breakdowns ?? []).flatMap((entry) => {
    const view = views.find((candidate) => candidate.id === entry.metric_id && candidate.role === entry.role);
    return view ? [{ view, breakdowns: entry.breakdowns }] : [];
  });
  return [...(primary ? [{ view: primary, breakdowns: snapshot.breakdowns ?? [] }] : []), ...others];
}

const roleWords: Record<MetricView['role'], string> = { primary: 'primary metric', guardrail: 'guardrail', secondary: 'secondary metric' };

/** A metric's lift per slice of the chosen dimension (or source), with SRM per slice; the primary metric first, any guardrail or secondary metric on demand. */
export function Breakdowns({
  snapshot,
  metrics,
  nameOf,
  dimension,
  onDimension,
}: {
  snapshot: Snapshot;
  metrics: readonly MetricView[];
  nameOf: SliceNamer;
  dimension: string | null;
  onDimension: (dimension: string) => void;
}) {
  const choices = brokenDownMetrics(snapshot, metrics).filter((choice) => choice.breakdowns.length > 0);
  const [metricId, setMetricId] = useState<string | null>(null);
  const [fallback] = useState(() => snapshot.breakdowns?.[0]?.dimension ?? '');
  const picked = choices.find((choice) => choice.view.id === metricId) ?? choices[0];
  if (!picked) return null;
  const { view: metric, breakdowns } = picked;
  const chosen = breakdowns.find((b) => b.dimension === dimension) ?? breakdowns.find((b) => b.dimension === fallback) ?? breakdowns[0];
  if (!chosen) return null;
  return (
    <section aria-labelledby="breakdowns-title" class="breakdown-picker">
      <h2 id="breakdowns-title">Breakdowns</h2>
      <div class="row">
        {choices.length > 1 ? (
          <Select
            label="Metric"
            value={metric.id}
            options={choices.map((choice) => ({ value: choice.view.id, label: `${choice.view.name} (${roleWords[choice.view.role]})` }))}
            onChange={(e) => setMetricId(e.currentTarget.value)}
          />
        ) : null}
        <Select
          label="Break the results down by"
          value={chosen.dimension}
          options={breakdowns.map((b) => ({ value: b.dimension, label: dimensionTitle(b.dimension) }))}
          onChange={(e) => onDimension(e.currentTarget.value)}
        />
      </div>
      <p class="muted">
        Each slice is analysed on its own, with the same relative lift as the header. “SRM” marks a slice whose split does not match the weights: that is where
        units go missing. “Significant after correction” survives Holm’s correction over all slices of this metric, green for a gain and red for a harm in the
        metric’s direction; with this many slices, an uncorrected 95% result appears by chance. Slices explain; the decision reads the whole experiment.
      </p>
      <BreakdownTable breakdown={chosen} metric={metric} nameOf={nameOf} />
    </section>
  );
}
