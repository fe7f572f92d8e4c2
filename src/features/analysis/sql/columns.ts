/** The pieces every per-variant aggregate of the SQL store is built from. */
import { sql, type RawBuilder } from 'kysely';

/** The unit's value capped from above (winsorized); NULL stays NULL (the unit has no value). */
export function capped(value: RawBuilder<unknown>, cap: number | null): RawBuilder<unknown> {
  if (cap === null) return value;
  return sql`(CASE WHEN ${value} > ${cap} THEN ${cap} ELSE ${value} END)`;
}

/** An output column of the per-variant aggregate: its alias and expression. */
export type Column = [alias: string, expression: RawBuilder<unknown>];
