/**
 * The analysis store contract (docs/architecture.md "The analysis store seam"): what a snapshot
 * needs from the storage of events and exposures, and the shapes every store returns. The SQL
 * store (sql/, on SQLite or PostgreSQL) and the ClickHouse store (clickhouse/) implement it; one
 * is chosen at start-up (create.ts), so the service, caps, CUPED, the build and the
 * recommendation never ask which store they have.
 */
import type { MetricAggregation, MetricKind, QuantileLevel } from '../../../db/tables/catalogue.js';
import type { ExperimentRow } from '../../experiments/read.js';
import type { SequenceInput, SequenceTotals } from './sequence-contract.js';

/** Where per-unit values come from: raw events (the full computation) or the experiment's rollups (the incremental one). */
export type UnitSource = 'events' | 'rollups';

/** What a store needs to know about one metric. */
export interface MetricSpec {
  /** The metric's id: its rows in the rollups (unit-source.ts). */
  metric_id?: string;
  event_key: string;
  kind: MetricKind;
  aggregation: MetricAggregation;
  window_ms: number;
  /** Keys of property_path (sum and mean); null for count aggregation. */
  value_keys: readonly string[] | null;
  /** Winsorization: each unit's value becomes min(value, cap) before the sums; null for none. */
  cap: number | null;
  /**
   * A percentile cap not known yet (the quantile, 0.5 < q < 1): the pass sums the uncapped values,
   * counts the nonzero ones and returns each statement's largest values, from which
   * percentile-cap.ts finds the cap and corrects the sums (`cap` must then be null).
   */
  percentile?: number | null;
  /**
   * Ratio metrics: this spec describes the numerator x, `denominator` the denominator y, and the
   * totals add the sums of y, y^2 and x y over units (x and y are 0 for a unit without events).
   */
  denominator?: MetricSpec;
  /**
   * CUPED (not for ratios): the covariate is the same per-unit value over
   * [exposed_at - lookback_ms, exposed_at), capped by the same cap, 0 without events; the totals
   * add its sum, sum of squares and cross product with the metric (see cuped-totals.ts).
   */
  lookback_ms?: number | null;
  /**
   * A metric on a fact table (docs/warehouse.md): its rows come from the fact table on its source,
   * read by the warehouse view (warehouse/view.ts); `event_key` is then '' and no store's rollups hold it.
   */
  fact?: FactReference | null;
}

/** Which fact table a metric reads, its column (sum and mean) and its row filter. */
export interface FactReference {
  fact_table_id: string;
  column: string | null;
  filter: string | null;
}

/**
 * Per-variant totals of one metric's per-unit values x:
 * n units with a value, sum of x, sum of x^2, and units with at least one counted event.
 * Ratio metrics also carry the denominator's sums (0 otherwise); their conversions are the units
 * with a nonzero denominator.
 */
export interface MetricTotals {
  n: number;
  sum: number;
  sum_of_squares: number;
  conversions: number;
  sum_y: number;
  sum_of_squares_y: number;
  sum_xy: number;
  /** Units with a nonzero value (counted for metrics with a pending percentile cap only). */
  nonzero: number;
  /** CUPED: sums over the same n units of the pre-period covariate, its square and its product with the value (0 without a lookback). */
  pre_sum: number;
  pre_sum_of_squares: number;
  pre_cross: number;
}

export interface VariantTotals {
  variant_key: string;
  /** Live exposures in the variant. */
  units: number;
  /** One entry per metric, in the order the metrics were given. */
  metrics: MetricTotals[];
}

export interface AggregationInput {
  workspaceId: string;
  experimentId: string;
  metrics: readonly MetricSpec[];
  /** Events occurring at or after this time are ignored (the experiment's stop), or null. */
  eventsBefore: number | null;
  /** Units per statement, or null for one statement over the whole experiment (see dialect-settings.ts). */
  chunkUnits: number | null;
  /** Raw events (the full computation, the default) or the rollups (unit-source.ts). */
  source?: UnitSource;
}

/** One returned top value of a pending percentile metric. */
export interface TopValue {
  variant_key: string;
  value: number;
}

/** The largest values of one pending percentile metric, per statement: what percentile-cap.ts merges. */
export interface TopLists {
  /** Per statement, its values (largest first) and whether the LIMIT may have cut more. */
  statements: Array<{ values: TopValue[]; truncated: boolean }>;
}

export interface Aggregation {
  totals: Map<string, VariantTotals>;
  /** Raw event rows the statements joined (0 from rollups). */
  eventsRead: number;
  /** By metric index, for the metrics with a pending percentile cap. */
  tops: Map<number, TopLists>;
}

export interface CapScope {
  workspaceId: string;
  experimentId: string;
  eventsBefore: number | null;
  source?: UnitSource;
}

/**
 * One value a quantile metric is taken over: a counted event's number (the event level) or a
 * unit's value of the metric (the unit level: its sum or mean, null when the unit has no number).
 */
export interface QuantileRow {
  variant_key: string;
  unit_id: string;
  value: number | null;
}

export interface QuantileValues {
  rows: QuantileRow[];
  /** Raw event rows the statement joined. */
  eventsRead: number;
}

export interface LateEvents {
  total: number;
  /** Inside the window of a metric with its key (and before the stop): they count, and earlier snapshots lacked them. */
  counted: number;
  /** Occurred before the unit's exposure: they count in no metric's value. */
  before_exposure: number;
  /** After the unit's exposure but outside every window of a metric with their key, or after the stop. */
  outside_window: number;
}

export interface LateEventScope {
  workspaceId: string;
  experimentId: string;
  /** The stop: events from then on count in no metric. */
  eventsBefore: number | null;
}

/** Values shown per breakdown; the rest are summed into `(other)`. */
export const TOP_VALUES = 20;

/** The bucket of units without a value of the breakdown, and of the values past the top ones. */
export const NONE_BUCKET = -1;
export const OTHER_BUCKET = -2;

/** A breakdown: an experiment dimension (from the assignment) or the exposure's source key. */
export interface BreakdownKey {
  name: string;
  kind: 'dimension' | 'source';
}

export interface BreakdownInput {
  workspaceId: string;
  experimentId: string;
  breakdowns: readonly BreakdownKey[];
  /** The primary metric with its cap resolved, or null (units only). */
  primary: MetricSpec | null;
  eventsBefore: number | null;
  chunkUnits: number | null;
  /** Raw events (the default) or the rollups (unit-source.ts). */
  source?: UnitSource;
}

/** Per breakdown: its top values (bucket i is values[i]) and the totals per bucket and variant. */
export interface BreakdownTotals {
  key: BreakdownKey;
  values: string[];
  /** bucket -> variant key -> totals (metrics holds the primary's totals, or nothing). */
  buckets: Map<number, Map<string, VariantTotals>>;
}

/** One metric's rows: what decides which events count and their numbers. */
export interface RollupSlot {
  metric_id: string;
  event_key: string;
  /** Keys of property_path when the metric sums or averages numbers; null otherwise. */
  value_keys: readonly string[] | null;
  window_ms: number;
  /** The CUPED lookback (0 without one). */
  lookback_ms: number;
}

export interface RefreshResult {
  /** Raw event rows the refresh read. */
  events_read: number;
  /** Units whose rows were rebuilt or gained events. */
  units_refreshed: number;
}

/** What the totals are sums of. */
export interface TotalsPlan {
  /** The snapshot's metrics in order (primary first), CUPED covariates included. */
  metrics: MetricSpec[];
  breakdowns: BreakdownKey[];
  /** The primary metric as the slices analyse it (no covariate), or null. */
  primary: MetricSpec | null;
}

export interface StoredTotals {
  /** Per variant, every metric of the plan (a percentile-capped one uncapped). */
  totals: Map<string, VariantTotals>;
  /** Per breakdown, as aggregateBreakdowns gives them. */
  breakdowns: BreakdownTotals[];
}

/** Where a snapshot was computed (its `computation.store`). */
export type ComputationStore = 'sqlite' | 'postgres' | 'clickhouse';

/** incremental: refresh the rollups with what is new and aggregate them; full: from all raw events, rollups untouched. */
export type ComputationMode = 'incremental' | 'full';

/** One row of a bandit's per-period totals: the units exposed in the period and the metric's n, sum and sum of squares over them. */
export interface PeriodCell {
  period: number;
  variant_key: string;
  units: number;
  n: number;
  sum: number;
  sumOfSquares: number;
}

/** How many of its largest nonzero values a statement over `statementUnits` units returns for a pending percentile cap. */
export type TopLimit = (quantile: number, statementUnits: number) => number;

export interface StoreRefreshOptions {
  /** Build everything from raw events, whatever the store's state says. */
  rebuild: boolean;
  /** The totals to keep up to date with the rollups, for a store that maintains them (null: none). */
  plan: TotalsPlan | null;
  /** Tests: runs after every write of the refresh and before it commits. */
  beforeCommit?: (() => Promise<void>) | undefined;
  /** Tests (SQLite): runs after each committed step of a build in steps. */
  afterStep?: (() => Promise<void>) | undefined;
  /** Tests (SQLite): units per step of a build in steps. */
  stepUnits?: number | undefined;
  /** Tests (SQLite): new events per round of a refresh. */
  roundEvents?: number | undefined;
  /** Tests (ClickHouse): the most mirrored rows a refresh compares through a set of their units (rollups.ts MAX_COMPARED_BY_SET). */
  comparedBySetAtMost?: number | undefined;
}

/**
 * The reads of one snapshot, over one view of the events: every call sees the same events
 * (ClickHouse: those of one committed drain, read once when the view opens).
 */
export interface StoreView {
  /** Brings the experiment's rollups up to date for these slots (the incremental computation). */
  refresh(row: ExperimentRow, slots: readonly RollupSlot[], options: StoreRefreshOptions): Promise<RefreshResult>;
  /** Per-variant totals of every metric, and the largest values of those whose percentile cap is pending. */
  aggregate(input: AggregationInput, topLimit?: TopLimit): Promise<Aggregation>;
  /** The `quantile` of the experiment's nonzero per-unit values of `metric`, or null without any. */
  percentileCap(scope: CapScope, metric: MetricSpec, quantile: number): Promise<number | null>;
  lateEvents(scope: LateEventScope, metrics: readonly MetricSpec[]): Promise<LateEvents>;
  /**
   * Every value a quantile metric of the experiment is taken over (uncapped; `metric.cap` is
   * ignored), read from raw events in either mode: a quantile is not a sum, so no rollup or
   * maintained total can give it by differences, and it is read again at each snapshot.
   */
  quantileValues(scope: LateEventScope, metric: MetricSpec, level: QuantileLevel): Promise<QuantileValues>;
  breakdowns(input: BreakdownInput): Promise<BreakdownTotals[]>;
  /** A bandit's rows: per (period, variant), with a unit in the last period that started at or before its exposure. */
  periodCells(scope: CapScope, spec: MetricSpec, starts: readonly number[]): Promise<PeriodCell[]>;
  /** The totals maintained with the rollups (only from a store whose `maintainsTotals`). */
  maintainedTotals(experimentId: string, plan: TotalsPlan): Promise<StoredTotals>;
  /** Funnel and retention metrics: per variant, the units reaching each step, from raw events (store/sequence-contract.ts). */
  sequences(input: SequenceInput): Promise<SequenceTotals>;
}

export interface AnalysisStore {
  readonly name: ComputationStore;
  /** The computation a snapshot gets when none is asked for. */
  readonly defaultMode: ComputationMode;
  /** Units per aggregation statement when the caller names none, or null for one statement per experiment. */
  readonly chunkUnits: number | null;
  /** Whether an incremental computation keeps per-variant totals with the rollups (else it aggregates every unit's rollups). */
  readonly maintainsTotals: boolean;
  /** Brings the store's copy of the experiment's exposures up to date before a snapshot (a store that reads them in place has nothing to do). */
  prepare(experimentId: string): Promise<void>;
  /** Opens the reads of one snapshot. */
  view(): Promise<StoreView>;
  /** A plan's history: metric totals over the units seen in a past period of an environment (HistoryInput above); null from a store that cannot read it. */
  historyTotals(input: HistoryInput): Promise<HistoryTotals | null>;
  /** A holdout's totals: its held-out units against its sample (HoldoutTotalsInput below); null from a store that cannot read them. */
  holdoutTotals(input: HoldoutTotalsInput): Promise<HoldoutTotals | null>;
}

/**
 * A holdout's snapshot (docs/statistics.md "The holdout estimate"): the units of its first
 * contacts (holdout_contacts), each in its group under the holdout's percentage now, with its
 * values counted from its first contact as a snapshot's from the exposure. Variant keys are
 * `held_out` (the control) and `sample`.
 */
export interface HoldoutTotalsInput {
  workspaceId: string;
  holdoutId: string;
  /** A unit is held out when its bucket is below this, else sampled when its sample bucket is below `sampleBuckets`. */
  heldOutBuckets: number;
  sampleBuckets: number;
  /** The holdout's end (or the computation's time): later events count nowhere. */
  eventsBefore: number;
  /** With their caps resolved (no pending percentile) and their CUPED lookback if any. */
  metrics: readonly MetricSpec[];
}

export interface HoldoutTotals {
  /** By group: `held_out` and `sample`. */
  totals: Map<string, VariantTotals>;
  /** Raw event rows the statement joined. */
  eventsRead: number;
}

/**
 * The history a plan reads (docs/statistics.md "9a. Planning an experiment"): a metric's per-unit
 * sums over the units seen in a past period of an environment, as if each had entered an
 * experiment when it was first seen. Every store computes them with its own per-unit values (the
 * same definitions as a snapshot's), so a baseline from history is the metric as the analysis
 * will measure it.
 */
export interface HistoryInput {
  workspaceId: string;
  environmentId: string;
  /** The period [from, to): units first seen in it, and their events before `to`. */
  from: number;
  to: number;
  /** The metrics, each with its cap resolved (a percentile cap is not applied to history) and its CUPED lookback if any. */
  metrics: readonly MetricSpec[];
}

/**
 * A unit is seen when it has an exposure to an experiment of the environment, or an event of the
 * workspace (events carry no environment), in the period; its values count from the first time
 * it is seen, as a snapshot's count from the exposure.
 */
export interface HistoryTotals {
  /** Distinct units seen in the period. */
  units: number;
  /** Per metric, in the order given: the totals over the units seen, as a snapshot's per variant. */
  metrics: MetricTotals[];
  /** Per metric: the events counted in its values (a ratio's numerator and denominator events). */
  events: number[];
}
