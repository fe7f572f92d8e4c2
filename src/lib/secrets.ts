import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 text with at least `bytes` bytes of entropy (rejection sampling, no modulo bias). */
export function randomBase62(bytes = 32): string {
  const length = Math.ceil((bytes * 8) / Math.log2(62));
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function sha256Hex(value: string): string {
  // The one-shot form skips the Hash object; it runs on every authenticated request.
  return crypto.hash('sha256', value, 'hex');
}

/**
 * Constant-time equality for two strings of any length. Equal byte lengths (every stored hash
 * against a fresh one) compare directly; otherwise both are hashed first, so the comparison
 * time never depends on where they differ, only (as usual) on whether their lengths match.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length === right.length) return crypto.timingSafeEqual(left, right);
  crypto.timingSafeEqual(crypto.createHash('sha256').update(left).digest(), crypto.createHash('sha256').update(right).digest());
  return false;
}

/**
 * Encrypts secrets we must read back (HMAC keys for webhooks) with AES-256-GCM. The stored form is
 * `v1.<iv>.<tag>.<ciphertext>` in base64url so the scheme can change later.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
    this.#key = key;
  }

  seal(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unrecognised sealed secret');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}

export function parseKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('VERDICT_SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

/**
 * The configured key, or one kept in `<dataDir>/secret.key` (created 0600 on first use) so the
 * embedded default needs no set-up. Scaled deployments set VERDICT_SECRET_KEY on every process.
 */
export function loadSecretBox(configuredKey: string | null, dataDir: string): SecretBox {
  if (configuredKey) return new SecretBox(parseKey(configuredKey));
  const file = path.join(dataDir, 'secret.key');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, crypto.randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return new SecretBox(parseKey(fs.readFileSync(file, 'utf8')));
}

/** The configured key's box, or the one of `<dataDir>/secret.key` if that file exists; null otherwise. */
export function existingSecretBox(configuredKey: string | null, dataDir: string): SecretBox | null {
  if (configuredKey) return new SecretBox(parseKey(configuredKey));
  const file = path.join(dataDir, 'secret.key');
  return fs.existsSync(file) ? new SecretBox(parseKey(fs.readFileSync(file, 'utf8'))) : null;
}
