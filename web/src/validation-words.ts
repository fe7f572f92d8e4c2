// The server's validator speaks in JSON Schema ("must NOT have more than 5 items", "must match
// pattern \"^https?://...\""). A person reads what to do instead: the same rule in plain words,
// and for the fields whose pattern is a format people know, an example of what fits.

/** What fits a field whose pattern the server names as a regex, by the pointer's last segment. */
const PATTERN_HINTS: Record<string, string> = {
  url: 'must be a web address starting with http:// or https://, e.g. https://hooks.example.com/verdict',
  key: 'may hold only lower-case letters, digits, dots, dashes and underscores (e.g. checkout-button)',
  event_key: 'may hold only lower-case letters, digits, dots, dashes and underscores (e.g. checkout.completed)',
};

const RULES: [RegExp, (...groups: string[]) => string][] = [
  [/^must NOT have more than (\d+) items?$/, (n) => `can hold at most ${n}`],
  [/^must NOT have fewer than (\d+) items?$/, (n) => (n === '1' ? 'needs at least one' : `needs at least ${n}`)],
  [/^must NOT have more than (\d+) characters?$/, (n) => `must be ${n} characters or fewer`],
  [/^must NOT have fewer than (\d+) characters?$/, (n) => (n === '1' ? 'must not be empty' : `must be at least ${n} characters`)],
  [/^must be >= (-?[\d.]+)$/, (n) => `must be at least ${n}`],
  [/^must be <= (-?[\d.]+)$/, (n) => `must be at most ${n}`],
  [/^must be > (-?[\d.]+)$/, (n) => `must be more than ${n}`],
  [/^must be < (-?[\d.]+)$/, (n) => `must be less than ${n}`],
  [/^must NOT have duplicate items.*$/, () => 'lists the same thing twice'],
  [/^must match format "uri"$/, () => 'must be a web address'],
  [/^must be integer$/, () => 'must be a whole number'],
];

/** A validator message in plain words; `pointer` (e.g. "/url") picks an example for pattern rules. */
export function plainMessage(message: string, pointer = ''): string {
  if (/^must match pattern /.test(message)) {
    const field = pointer.split('/').filter(Boolean).pop() ?? '';
    return PATTERN_HINTS[field] ?? 'has characters that are not allowed here';
  }
  for (const [rule, say] of RULES) {
    const match = rule.exec(message);
    if (match) return say(...match.slice(1));
  }
  return message;
}
