import { chance, lift } from '../format.js';
import { useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { Experiment } from '../types.js';
import { latestStanding } from './experiments-standing.js';
import { recommendationWords } from './results-header.js';

/**
 * Where a started experiment stands, on its own page: the latest snapshot's recommendation, the
 * leading lift and a broken split, from the snapshot history (not a peek), with the results a
 * click away.
 */
export function CurrentStanding({ experiment: e }: { experiment: Experiment }) {
  const standing = useResource(() => latestStanding(e), [e.id, e.updated_at]);
  if (!e.started_at || standing.loading || standing.error) return null;
  const s = standing.data;
  if (!s) {
    return (
      <p class="muted" data-testid="current-standing">
        No snapshot yet: the first analysis runs on the rule’s cadence, or from the results page.
      </p>
    );
  }
  const stopped = e.status === 'stopped' || e.status === 'archived';
  return (
    <div class="notice" data-testid="current-standing">
      <p>
        Latest snapshot:{' '}
        <span class={`badge rec rec-${s.recommendation}`}>{recommendationWords(s.recommendation, s.variantKey, { stopped, controlKey: s.controlKey })}</span>
        {s.lift ? (
          <>
            {' '}
            · {s.lift.variant} {lift(s.lift.mean)} ({lift(s.lift.low)} to {lift(s.lift.high)}), {chance(s.lift.chance)} to beat control
          </>
        ) : null}{' '}
        · <Link href={`/experiments/${e.id}/results`}>Results</Link>
      </p>
      {s.srm ? (
        <p class="warning" data-testid="current-srm">
          The split does not match the weights (sample-ratio mismatch): no result of this experiment can be trusted until the cause is found.
        </p>
      ) : null}
    </div>
  );
}
