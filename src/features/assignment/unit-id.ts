import Type from 'typebox';

/**
 * The one rule for a unit id, wherever one is given: assign and event bodies, the OFREP
 * targetingKey and the paths that manage a unit's assignments and overrides. It is counted in
 * characters (Unicode code points, as JSON Schema's maxLength counts them), so every unit that
 * can be assigned can also be looked up, re-bucketed and pinned by its path.
 */
export const UNIT_ID_MAX_CHARACTERS = 256;

/**
 * The router's limit on a path parameter, checked on the decoded value in UTF-16 units: a unit
 * id of UNIT_ID_MAX_CHARACTERS characters is at most twice that, so this leaves room to spare and
 * the schema's character count decides.
 */
export const UNIT_ID_MAX_PARAM_LENGTH = UNIT_ID_MAX_CHARACTERS * 4;

export function unitIdSchema(description: string) {
  return Type.String({ minLength: 1, maxLength: UNIT_ID_MAX_CHARACTERS, description });
}

/** Characters as JSON Schema counts them: a surrogate pair (an emoji, say) is one. */
export function characterCount(value: string): number {
  let pairs = 0;
  for (let index = 0; index < value.length - 1; index++) {
    const high = value.charCodeAt(index);
    const low = value.charCodeAt(index + 1);
    if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
      pairs++;
      index++;
    }
  }
  return value.length - pairs;
}
