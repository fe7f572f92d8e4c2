/**
 * Wording that turns a page describing the product into a lab diary: when something was measured,
 * in which stretch of work, by whom, beside what. Git keeps that history; a page says what Verdict
 * does, how fast, on what machine, and the command that reproduces each figure.
 *
 * Lines inside fenced code blocks and inline code spans are not read: example payloads and
 * commands legitimately hold dates (`"signup_at": "2024-01-01"`, a `formatDate` argument).
 * "session" alone is the admin UI's sign-in session and stays allowed; only "session" as a
 * stretch of work is refused.
 */
export interface RefusedPattern {
  pattern: RegExp;
  why: string;
}

const ORDINALS = 'first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth';

export const REFUSED_PATTERNS: readonly RefusedPattern[] = [
  {
    // A calendar date in prose; an ISO timestamp (`2026-11-24T00:05:24.701Z`) in an example is fine.
    pattern: /\b20\d\d-[01]\d-[0-3]\d\b(?!T\d)/,
    why: 'the date of a run',
  },
  { pattern: /\b\d{1,2}:\d\d(?:\s*[–-]\s*\d{1,2}:\d\d)?\s+UTC\b/, why: 'the time of day of a run' },
  {
    pattern: new RegExp(`\\b(?:${ORDINALS}|this|last|previous|next|earlier|later|same|another|each|every) sessions?\\b(?!\\s+(?:cookie|token)s?\\b)`, 'i'),
    why: '"session" as a stretch of work',
  },
  {
    pattern: /\b(?:other|another|earlier|later) sessions?(?:'s?)?\s+(?:running|ran|tests?|work|runs?|benchmarks?)\b/i,
    why: '"session" as a stretch of work',
  },
  { pattern: /\bsessions?'s? (?:deadline|tests?|work|runs?|benchmarks?|machine)\b/i, why: '"session" as a stretch of work' },
  { pattern: /\bsession\s*\(\s*20\d\d-/i, why: '"session" as a stretch of work' },
  { pattern: /\brounds? of work\b/i, why: 'a "round of work"' },
  { pattern: /\b(?:this|last|next) (?:week|evening|morning|afternoon|night)\b/i, why: 'when something was done' },
  // "helper" is also a template body's Handlebars helper: only the one who ran something is refused.
  { pattern: /\bhelper\s+"[^"]+"/i, why: 'who ran something' },
  {
    pattern: /\b(?:other|another) helpers?(?:'s?)?\s+(?:work|tests?|test runs?|runs?|benchmarks?|scripts?|ran|running|beside)\b/i,
    why: 'who ran something',
  },
  { pattern: /\bhelpers?\s+(?:ran|running|beside)\b/i, why: 'who ran something' },
];

export interface Offence {
  file: string;
  /** 1-based. */
  line: number;
  text: string;
  why: string;
}

/** The line as read for wording: inline code spans blanked out. */
function proseOf(line: string): string {
  return line.replace(/(`+)(?:(?!\1).)+\1/g, ' ');
}

/** Every refused phrase of a Markdown page, with its line, outside code. */
export function diaryOffences(file: string, markdown: string): Offence[] {
  const offences: Offence[] = [];
  let inFence = false;
  markdown.split('\n').forEach((raw, index) => {
    if (/^\s*```/.test(raw)) {
      inFence = !inFence;
      return;
    }
    if (inFence) return;
    const prose = proseOf(raw);
    for (const { pattern, why } of REFUSED_PATTERNS) {
      const match = pattern.exec(prose);
      if (match) offences.push({ file, line: index + 1, text: match[0], why });
    }
  });
  return offences;
}

export function describeOffences(offences: readonly Offence[]): string {
  return offences.map((o) => `${o.file}:${o.line}: "${o.text}" (${o.why})`).join('\n');
}
