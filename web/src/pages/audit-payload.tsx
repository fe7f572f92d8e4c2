import { Table } from '../components/ui.js';
import { methods } from './decision-rule.js';

// An audit payload for people: a change as field, before and after; anything else as fields and
// values, nested objects one level deep; the raw JSON one click away.

/** Ids are left to the JSON view: the names they stand for are in the entry's target and actor. */
function readable(field: string): boolean {
  return field !== 'id' && !field.endsWith('_id') && !field.endsWith('_ids');
}

/** One value on one line; objects as "field value" pairs without their ids (the JSON view has them). */
function short(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value === '' ? '(empty)' : valueWords(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map(short).join('; ');
  const pairs = Object.entries(value as Record<string, unknown>).filter(([field]) => readable(field));
  return pairs.map(([field, inner]) => `${words(field)} ${short(inner)}`).join(', ');
}

/** Names of the enumerated values a person reads in a payload: the rule and the correction by name. */
const VALUE_NAMES: Record<string, string> = { benjamini_hochberg: 'Benjamini-Hochberg', holm: 'Holm', goals_and_guardrails: 'goals and guardrails' };

/** A stored value in words: a decision method or correction by its name, another snake_case code with spaces. */
function valueWords(value: string): string {
  const named = methods.find((method) => method.value === value)?.label ?? VALUE_NAMES[value];
  if (named) return named;
  return /^[a-z]+(_[a-z]+)+$/.test(value) ? value.replace(/_/g, ' ') : value;
}

function words(field: string): string {
  return field.replace(/_/g, ' ');
}

type Changes = Record<string, { from?: unknown; to?: unknown }>;

function isChanges(value: unknown): value is Changes {
  return (
    Boolean(value) &&
    typeof value === 'object' &&
    Object.values(value as object).every((change) => change && typeof change === 'object' && ('from' in change || 'to' in change))
  );
}

/** Before → after, one row per field; nested objects (a decision rule, say) per inner field that changed. */
function ChangeTable({ changes }: { changes: Changes }) {
  const rows = Object.entries(changes).flatMap(([field, change]) => {
    const { from, to } = change;
    if (from && to && typeof from === 'object' && typeof to === 'object' && !Array.isArray(from) && !Array.isArray(to)) {
      const inner = new Set([...Object.keys(from), ...Object.keys(to)]);
      return [...inner]
        .filter((name) => JSON.stringify((from as Record<string, unknown>)[name]) !== JSON.stringify((to as Record<string, unknown>)[name]))
        .map((name) => ({
          field: `${words(field)}: ${words(name)}`,
          from: (from as Record<string, unknown>)[name],
          to: (to as Record<string, unknown>)[name],
        }));
    }
    return [{ field: words(field), from, to }];
  });
  return (
    <Table caption="Changes" columns={['Field', 'Before', 'After']}>
      {rows.map((row) => (
        <tr key={row.field}>
          <th scope="row">{row.field}</th>
          <td>
            <del>{short(row.from)}</del>
          </td>
          <td>
            <ins>{short(row.to)}</ins>
          </td>
        </tr>
      ))}
    </Table>
  );
}

function FieldList({ record }: { record: Record<string, unknown> }) {
  return (
    <dl class="facts payload-facts">
      {Object.entries(record)
        .filter(([field]) => readable(field))
        .map(([field, value]) => (
          <div key={field}>
            <dt>{words(field)}</dt>
            <dd>{value && typeof value === 'object' && !Array.isArray(value) ? <FieldList record={value as Record<string, unknown>} /> : short(value)}</dd>
          </div>
        ))}
    </dl>
  );
}

const VERDICT_WORDS: Record<string, string> = {
  winner: 'a winner',
  no_difference: 'no difference',
  keep_running: 'keep running',
  max_duration_reached: 'the planned duration ended',
};

/** A recommendation as the results page words it, shortly: "ship fast", "investigate (a health check failed)". */
function recommendationText(recommendation: { action?: unknown; variant_key?: unknown }): string {
  const variant = typeof recommendation.variant_key === 'string' ? recommendation.variant_key : '';
  switch (recommendation.action) {
    case 'ship':
      return `ship ${variant}`;
    case 'rollback':
      return `roll back ${variant}`.trim();
    case 'investigate':
      return 'investigate: a health check failed (a broken split, no exposures or no events)';
    case 'no_difference':
      return 'no difference';
    default:
      return 'keep running';
  }
}

/**
 * Entries whose payload is numbers and codes for machines, as a sentence: a bandit's reweighting
 * (weights in %, chance of being best) and a computed snapshot (its recommendation, which weighs the
 * health checks, never the rule's bare verdict). Null for every other entry.
 */
export function payloadSummary(action: string, payload: Record<string, unknown>): string | null {
  if (action === 'experiment.bandit_reweighted') {
    if (typeof payload.summary === 'string') return payload.summary;
    const from = (payload.from ?? {}) as Record<string, number>;
    const to = (payload.to ?? {}) as Record<string, number>;
    return `Weights ${Object.keys(to)
      .map((key) => `${key} ${from[key] ?? 0}% → ${to[key]}%`)
      .join(', ')}`;
  }
  if (action === 'experiment.results_computed') {
    const recommendation = payload.recommendation as { action?: unknown; variant_key?: unknown } | undefined;
    if (recommendation) return `Snapshot computed; recommendation: ${recommendationText(recommendation)}.`;
    const verdict = VERDICT_WORDS[String(payload.verdict)] ?? 'none';
    return `Snapshot computed; the decision rule alone (before the health checks, which this entry predates) found ${verdict}.`;
  }
  return null;
}

export function Payload({ payload, action = '' }: { payload: Record<string, unknown>; action?: string }) {
  const summary = payloadSummary(action, payload);
  if (summary !== null) {
    return (
      <div class="payload" data-testid="payload">
        <p data-testid="payload-summary">{summary}</p>
        <details>
          <summary>JSON</summary>
          <pre class="code">{JSON.stringify(payload, null, 2)}</pre>
        </details>
      </div>
    );
  }
  const { changes, ...rest } = payload;
  return (
    <div class="payload" data-testid="payload">
      {isChanges(changes) ? <ChangeTable changes={changes} /> : null}
      {Object.keys(rest).length > 0 || (changes !== undefined && !isChanges(changes)) ? <FieldList record={isChanges(changes) ? rest : payload} /> : null}
      <details>
        <summary>JSON</summary>
        <pre class="code">{JSON.stringify(payload, null, 2)}</pre>
      </details>
    </div>
  );
}
