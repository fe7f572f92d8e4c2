/**
 * The values of an experiment's dimensions (docs/analysis.md "Breakdowns by dimension") taken from the assign
 * context of a unit's first assignment, stored with it for the analysis to group by.
 */

/** Longer values are cut to this many characters (code points), so a slice name stays a name. */
export const DIMENSION_VALUE_MAX_CHARS = 128;

/**
 * A context attribute as a dimension value: strings as they are, numbers and booleans as their
 * text; anything else (absent, null, objects, arrays) is no value.
 */
function asValue(attribute: unknown): string | null {
  let text: string;
  if (typeof attribute === 'string') text = attribute;
  else if (typeof attribute === 'number' || typeof attribute === 'boolean') text = String(attribute);
  else return null;
  const chars = Array.from(text);
  return chars.length > DIMENSION_VALUE_MAX_CHARS ? chars.slice(0, DIMENSION_VALUE_MAX_CHARS).join('') : text;
}

/**
 * The JSON object {dimension: value} to store with a first assignment, holding only the
 * dimensions the context gives a value; null when the experiment has no dimension or none has a
 * value (so experiments without dimensions store nothing).
 */
export function dimensionValuesOf(dimensions: readonly string[], context: Record<string, unknown> | undefined): string | null {
  if (dimensions.length === 0 || !context) return null;
  const values: Record<string, string> = {};
  let any = false;
  for (const name of dimensions) {
    const value = Object.hasOwn(context, name) ? asValue(context[name]) : null;
    if (value === null) continue;
    values[name] = value;
    any = true;
  }
  return any ? JSON.stringify(values) : null;
}
