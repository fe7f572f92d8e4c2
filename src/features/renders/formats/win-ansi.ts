// The character set the standard PDF fonts can show (WinAnsiEncoding): printable ASCII, Latin-1
// and these typographic marks in the 0x80-0x9F range.
const WIN_ANSI_EXTRAS = new Set(
  '\u20ac\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u017d\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u017e\u0178',
);

function encodable(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || char === '\n' || WIN_ANSI_EXTRAS.has(char);
}

// Spaces Intl uses in formatted numbers (fr-FR groups with U+202F) and other typographic spaces.
const SPACES = /[\u2000-\u200a\u202f\u205f\u3000]/g;
const INVISIBLE = /[\u200b-\u200d\u2060\ufeff]/g;

/** `é` stays, `ő` becomes `o`, `✓` becomes `?`: the text a standard font can encode. */
export function toWinAnsi(text: string): string {
  const normalized = text.normalize('NFC').replace(SPACES, ' ').replace(INVISIBLE, '').replace(/\t/g, '    ').replace(/\r\n?/g, '\n');
  let out = '';
  for (const char of normalized) {
    if (encodable(char)) {
      out += char;
      continue;
    }
    const base = char.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
    out += base !== '' && [...base].every(encodable) ? base : '?';
  }
  return out;
}
