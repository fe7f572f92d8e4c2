import { integer, pValue } from '../format.js';
import type { Snapshot } from '../types.js';

/** What the late events did: counted in a metric, or not (before the unit's exposure, or outside the metric's window). */
function LateEvents({ snapshot }: { snapshot: Snapshot }) {
  const late = snapshot.late_event_count ?? 0;
  if (late === 0) return <>None so far.</>;
  const split = snapshot.late_events;
  if (!split) {
    return <>Only those after the unit’s exposure, inside the metric’s window, count in a metric. Earlier snapshots did not have them.</>;
  }
  return (
    <>
      {integer(split.counted)} count in a metric (earlier snapshots did not have them, so results may have shifted); {integer(split.before_exposure)} happened
      before the unit’s exposure and {integer(split.outside_window)} outside the metric’s window, so they count in none.
    </>
  );
}

/**
 * The late events that changed a number, in bold: the ones that count in a metric. Those from
 * before the unit's exposure (a backfill, say) are late too but change nothing, so they are not
 * the headline.
 */
function lateHeadline(snapshot: Snapshot): string {
  const late = snapshot.late_event_count ?? 0;
  const split = snapshot.late_events;
  if (!split) return `Late events: ${integer(late)}`;
  return `Late events counted in a metric: ${integer(split.counted)}`;
}

/** SRM, late events, weight changes and peeks: the things that make results less trustworthy. */
export function HealthChecks({ snapshot }: { snapshot: Snapshot }) {
  const late = snapshot.late_event_count ?? 0;
  const peeks = snapshot.peek_count_at_computation ?? 0;
  return (
    <section aria-labelledby="checks-title">
      <h2 id="checks-title">Data checks</h2>
      <ul class="checks">
        <li data-testid="check-srm">
          <strong>Split of units: {snapshot.srm_warning ? 'does not match the weights' : 'as weighted'}</strong> ({pValue(snapshot.srm_chi_squared_p)}).{' '}
          {snapshot.srm_warning
            ? 'Below 0.001: units go missing or are counted twice in some variant. Find the cause before trusting any number on this page.'
            : 'The observed split is consistent with the weights (a warning shows below 0.001).'}
        </li>
        <li data-testid="check-late">
          <strong>{lateHeadline(snapshot)}</strong> — events of this experiment’s metrics from its units that arrived 7 to 30 days after they happened (from
          apps that were offline, or a backfill); {integer(late)} in all. <LateEvents snapshot={snapshot} />
        </li>
        <li>
          <strong>Weights changed since start: {snapshot.weights_changed_since_start ? 'yes' : 'no'}</strong>
          {snapshot.weights_changed_since_start
            ? ' — units were split differently at different times; if behaviour changed over time, comparisons can be biased.'
            : ' — the traffic split is as it was at the start.'}
        </li>
        <li>
          <strong>Peeks before this snapshot: {integer(peeks)}</strong> — each opening of results in this UI is logged. Checking often and stopping at the first
          good-looking result inflates false positives under the posterior-threshold rule; the always-valid rules stay valid however often you look.
        </li>
      </ul>
    </section>
  );
}
