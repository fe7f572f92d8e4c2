import { Table } from '../components/ui.js';
import { number, percent, pValue } from '../format.js';
import type { Breakdown, BreakdownValue, Snapshot } from '../types.js';
import type { Formatter } from './results-parts.js';

/** The anchor of one slice's row, so the SRM warning can point at it. */
function sliceId(dimension: string, index: number): string {
  return `slice-${dimension.replace(/[^A-Za-z0-9_-]/g, '_')}-${index}`;
}

function jumpTo(id: string) {
  return (event: Event) => {
    event.preventDefault();
    const row = document.getElementById(id);
    row?.scrollIntoView({ block: 'center' });
    row?.focus();
  };
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

/** At the top of the results: the SRM warning, and the slice that explains it. */
export function SrmSliceWarning({ snapshot }: { snapshot: Snapshot }) {
  if (!snapshot.srm_warning) return null;
  const flagged = srmSlices(snapshot);
  return (
    <div class="warning" role="alert" data-testid="srm-slice-warning">
      <strong>Sample ratio mismatch (p = {pValue(snapshot.srm_chi_squared_p)}).</strong>{' '}
      {flagged.length > 0 ? (
        <>
          The split is most broken in{' '}
          <a href={`#${flagged[0]?.id}`} onClick={jumpTo(flagged[0]?.id ?? '')} data-testid="srm-slice-link">
            {flagged[0]?.dimension} = {flagged[0]?.value}
          </a>
          {flagged.length > 1 ? ` (and ${flagged.length - 1} more slice${flagged.length > 2 ? 's' : ''} marked SRM below)` : ''}: look there for the bug before
          trusting these results.
        </>
      ) : (
        'No single slice explains it: the cause is not tied to one dimension value or API key.'
      )}
    </div>
  );
}

function EffectCell({ value, format }: { value: BreakdownValue; format: Formatter }) {
  const treatments = value.per_variant.filter((variant) => !variant.is_control);
  if (treatments.every((variant) => !variant.effect)) return <td>—</td>;
  return (
    <td>
      {treatments.map((variant) => {
        const effect = variant.effect;
        if (!effect) return null;
        const [low, high] = effect.absolute.credible_interval_95;
        return (
          <div key={variant.variant_key}>
            {treatments.length > 1 ? <code>{variant.variant_key}: </code> : null}
            {format(effect.absolute.mean)} ({format(low)} to {format(high)}), chance to beat control {percent(effect.chance_to_beat_control, 1)}
          </div>
        );
      })}
    </td>
  );
}

function BreakdownTable({ breakdown, format }: { breakdown: Breakdown; format: Formatter }) {
  const title = breakdown.dimension === 'source' ? 'By source (the API key that logged the exposure)' : `By ${breakdown.dimension}`;
  return (
    <>
      <h3>{title}</h3>
      <Table caption={title} columns={['Value', 'Units', 'Effect against the control (95% interval)', 'SRM p-value', 'Marks']}>
        {breakdown.values.map((value, index) => (
          <tr
            key={value.value}
            id={sliceId(breakdown.dimension, index)}
            tabIndex={-1}
            class={value.srm_warning ? 'slice-srm' : undefined}
            data-testid="breakdown-row"
          >
            <th scope="row">
              <code>{value.value}</code>
            </th>
            <td>{number(value.units)}</td>
            <EffectCell value={value} format={format} />
            <td>{pValue(value.srm_chi_squared_p)}</td>
            <td>
              {value.srm_warning ? <span class="badge badge-srm">SRM</span> : null}{' '}
              {value.significant_after_correction ? <span class="badge badge-significant">significant after correction</span> : null}
            </td>
          </tr>
        ))}
      </Table>
    </>
  );
}

/** One table per dimension and for source: units, the primary metric's effect, SRM per slice. */
export function Breakdowns({ snapshot, format }: { snapshot: Snapshot; format: Formatter }) {
  const breakdowns = snapshot.breakdowns ?? [];
  if (breakdowns.length === 0) return null;
  return (
    <section aria-labelledby="breakdowns-title">
      <h2 id="breakdowns-title">Breakdowns</h2>
      <p class="muted">
        Each slice is analysed on its own. “SRM” marks a slice whose split does not match the weights: that is where units go missing. “Significant after
        correction” survives Holm’s correction over all slices; with this many slices, an uncorrected 95% result appears by chance. Slices explain; the decision
        reads the whole experiment.
      </p>
      {breakdowns.map((breakdown) => (
        <BreakdownTable key={breakdown.dimension} breakdown={breakdown} format={format} />
      ))}
    </section>
  );
}
