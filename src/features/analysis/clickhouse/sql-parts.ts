/** The parts every ClickHouse statement of the analysis is written with: bound parameters, exact decimals, the per-unit scope and value columns. */
import type { MetricSpec, UnitSource } from '../store/contract.js';

/** Which events of a unit a value counts: its metric's window, or the CUPED lookback before the exposure. */
export type Period = 'window' | 'lookback';

/** Digits after the point of the exact sums: terms are exact to 1e-20; Decimal256 leaves 56 digits before it. */
export const DECIMAL_SCALE = 20;

/** A statement's parameters, bound by ClickHouse ({name:Type}): no value is ever spliced into the text. */
export class Params {
  readonly values: Record<string, unknown> = {};
  #next = 0;

  #bind(value: unknown, type: string): string {
    const name = `p${this.#next++}`;
    this.values[name] = value;
    return `{${name}:${type}}`;
  }
  string(value: string): string {
    return this.#bind(value, 'String');
  }
  strings(values: readonly string[]): string {
    return this.#bind([...values], 'Array(String)');
  }
  int(value: number): string {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer parameter: ${value}`);
    return this.#bind(value, 'Int64');
  }
  float(value: number): string {
    return this.#bind(value, 'Float64');
  }
}

/** The number at the JSON path of `e.properties` (integers and reals only, as the SQL dialects read it), or NULL. */
export function jsonNumber(params: Params, keys: readonly string[]): string {
  const path = keys.map((key) => params.string(key)).join(', ');
  return `if(JSONType(e.properties, ${path}) IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(e.properties, ${path}), NULL)`;
}

export interface UnitScope {
  workspaceId: string;
  experimentId: string;
  /** The stop: events at or after it count in no metric; null while running. */
  eventsBefore: number | null;
  /** Raw events (the default) or the rollups as of their last committed refresh (clickhouse/rollup-sql.ts). */
  source?: UnitSource;
  /** The committed drain number (clickhouse/events.ts committedDrain): events under a higher one are not read. */
  drained: number;
}

/** Count and binary metrics: a unit without events has 0; sum and mean: no value (NULL). */
export function withoutEvents(metric: MetricSpec, column: string): string {
  return metric.kind === 'binary' || metric.aggregation === 'count' || metric.value_keys === null ? `ifNull(${column}, 0)` : column;
}

export interface UnitColumn {
  alias: string;
  metric: MetricSpec;
  period: Period;
}
