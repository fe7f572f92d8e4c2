// Client-side `pattern` attributes. Browsers compile them with the RegExp `v` flag, under which a
// "-" inside a character class must be escaped: "[a-z0-9._-]" is a syntax error there (logged to
// the console, and the check silently skipped). Each mirrors the server's rule for the field.

/** Experiment, metric, segment and mutex-group keys: ^[a-z0-9._-]{1,128}$ on the server. */
export const KEY_PATTERN = '[a-z0-9._\\-]{1,128}';
/** Variant keys. */
export const VARIANT_KEY_PATTERN = '[a-z0-9._\\-]{1,64}';
/** Environment slugs. */
export const ENVIRONMENT_SLUG_PATTERN = '[a-z0-9\\-]{1,32}';
/** Webhook source slugs. */
export const SOURCE_SLUG_PATTERN = '[a-z0-9\\-]{1,64}';
