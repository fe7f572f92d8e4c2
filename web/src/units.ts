// The forms speak in a person's units while the API keeps its own: shares as percentages
// (99.5 for 0.995), windows in days (7 for "P7D"). Each pair converts both ways; a value the form
// cannot read is sent as typed, so the server names it.

/** 0.995 -> "99.5"; no float noise ("99.50000000000001"). */
export function toPercentText(fraction: number): string {
  return String(Number((fraction * 100).toPrecision(12)));
}

/** "99.5" -> 0.995; an empty or unreadable field stays NaN for the server to refuse. */
export function fromPercentText(text: string): number {
  const value = Number(text.trim().replace(/%$/, ''));
  return Number((value / 100).toPrecision(12));
}

const DURATION = /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** "P7D" -> "7", "PT12H" -> "0.5"; a duration in months or years (which has no fixed length) as typed. */
export function toDaysText(duration: string): string {
  const match = DURATION.exec(duration);
  if (!match || duration === 'P' || duration.endsWith('T')) return duration;
  const [weeks, days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number];
  const total = weeks * 7 + days + hours / 24 + minutes / 1440 + seconds / 86_400;
  return String(Number(total.toPrecision(6)));
}

/** "7" -> "P7D", "0.5" -> "PT12H"; anything else as typed (an ISO duration still works). */
export function fromDaysText(text: string): string {
  const trimmed = text.trim();
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return trimmed;
  const days = Number(trimmed);
  if (Number.isInteger(days)) return `P${days}D`;
  const whole = Math.floor(days);
  const seconds = Math.round((days - whole) * 86_400);
  return `P${whole > 0 ? `${whole}D` : ''}T${seconds}S`;
}

/** "7 days", "1 day", "12 hours" for a list or summary. */
export function durationWords(duration: string): string {
  const days = Number(toDaysText(duration));
  if (!Number.isFinite(days)) return duration;
  if (days < 1) return `${Number((days * 24).toPrecision(3))} hours`;
  return `${days} ${days === 1 ? 'day' : 'days'}`;
}
