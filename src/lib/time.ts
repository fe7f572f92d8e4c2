export function toIso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export function toIsoOrNull(epochMs: number | null | undefined): string | null {
  return epochMs === null || epochMs === undefined ? null : toIso(epochMs);
}

/** The injectable clock: tests move time without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
