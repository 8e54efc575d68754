import { randomBytes } from 'node:crypto';

// Crockford base32, lower case: sortable, unambiguous, URL-safe.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** A 26-character time-sortable id body: 48 bits of milliseconds, then 80 random bits. */
export function sortableId(nowMs: number = Date.now()): string {
  let time = '';
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + randomText(16);
}

/** Random base32 text of the given length (5 bits of entropy per character). */
export function randomText(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] & 31];
  return out;
}

export type IdPrefix =
  | 'ws' | 'per' | 'mem' | 'ses' | 'key' | 'inb' | 'ch' | 'ct' | 'cv' | 'm' | 'att' | 'eml'
  | 'wh' | 'dlv' | 'wha' | 'msg' | 'mig' | 'bc' | 'job' | 'inv' | 'code' | 'fb' | 'rt' | 'sub' | 'evt';

export function newId(prefix: IdPrefix, nowMs?: number): string {
  return `${prefix}_${sortableId(nowMs)}`;
}
