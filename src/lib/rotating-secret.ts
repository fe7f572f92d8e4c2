import type { SecretBox } from './secrets.js';
import { toIsoOrNull } from './time.js';

// A webhook secret that rotates with a grace period: a webhook source's inbound secret, an
// outbound endpoint's signing secret, the workspace secret task-tool callbacks are signed with.
// A rotation seals a new secret and keeps the replaced one working (verifying or signing) for a
// day, so the other side can switch over; a second rotation inside that day retires the oldest at
// once, so at most two secrets work at any time.

/** How long the replaced secret keeps working after a rotation. */
export const SECRET_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** The stored columns of a rotating secret: the current one sealed, and the replaced one with its expiry. */
export interface RotatingSecretColumns {
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
}

type PreviousSecret = Pick<RotatingSecretColumns, 'previous_secret_enc' | 'previous_secret_expires_at'>;

function previousStillWorks(row: Pick<PreviousSecret, 'previous_secret_expires_at'>, now: number): boolean {
  return row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now;
}

/** What the API shows: when the replaced secret stops working, while it still works; null otherwise. */
export function previousSecretExpiry(row: Pick<PreviousSecret, 'previous_secret_expires_at'>, now: number): string | null {
  return previousStillWorks(row, now) ? toIsoOrNull(row.previous_secret_expires_at) : null;
}

/** Every secret that works now, opened: the current one, then the replaced one inside its grace period. */
export function workingSecrets(box: SecretBox, row: RotatingSecretColumns, now: number): string[] {
  const secrets = [box.open(row.secret_enc)];
  if (row.previous_secret_enc !== null && previousStillWorks(row, now)) secrets.push(box.open(row.previous_secret_enc));
  return secrets;
}

/** The columns after rotating to `secret` at `now`: it is sealed as the current one, the current one becomes the previous one. */
export function rotatedColumns(box: SecretBox, current: Pick<RotatingSecretColumns, 'secret_enc'>, secret: string, now: number) {
  return { secret_enc: box.seal(secret), previous_secret_enc: current.secret_enc, previous_secret_expires_at: now + SECRET_ROTATION_GRACE_MS };
}

/** The columns re-encrypted by `reseal` (a secret-key rotation), the previous secret whether or not it still works. */
export function resealedColumns(row: Pick<RotatingSecretColumns, 'secret_enc' | 'previous_secret_enc'>, reseal: (sealed: string) => string) {
  return { secret_enc: reseal(row.secret_enc), previous_secret_enc: row.previous_secret_enc === null ? null : reseal(row.previous_secret_enc) };
}
