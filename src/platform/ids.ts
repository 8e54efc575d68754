import { randomBytes } from 'node:crypto';

// Crockford base32, lower case: sortable, unambiguous, URL-safe.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

// Ids made for the same millisecond by this process increase (the random part counts up), so rows
// written one after another in one millisecond keep their order when sorted by id. The last random
// part is remembered for the most recent milliseconds used (ids made for a given time, such as a
// test clock or an import, interleave with ids made for the wall clock).
const lastRandomByMs = new Map<number, string>();
const REMEMBERED_MS = 64;

function increment(text: string): string {
  const digits = text.split('');
  for (let i = digits.length - 1; i >= 0; i--) {
    const v = ALPHABET.indexOf(digits[i]);
    if (v < 31) {
      digits[i] = ALPHABET[v + 1];
      return digits.join('');
    }
    digits[i] = ALPHABET[0];
  }
  return idRandomText(text.length);
}

/** A 26-character time-sortable id body: 48 bits of milliseconds, then 80 random bits. */
export function sortableId(nowMs: number = Date.now()): string {
  let time = '';
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const previous = lastRandomByMs.get(nowMs);
  const random = previous ? increment(previous) : idRandomText(16);
  lastRandomByMs.delete(nowMs);
  lastRandomByMs.set(nowMs, random);
  if (lastRandomByMs.size > REMEMBERED_MS) lastRandomByMs.delete(lastRandomByMs.keys().next().value!);
  return time + random;
}

/** Random base32 text of the given length (5 bits of entropy per character); fresh bytes, for secrets too. */
export function randomText(length: number): string {
  return encode(randomBytes(length), 0, length);
}

// The random part of ids (not secrets) comes from a pool filled 4 KB at a time: a call into the
// CSPRNG per id cost more than the rest of making it, and a stored message makes several ids.
// Each byte is used once.
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function idRandomText(length: number): string {
  if (poolOffset + length > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const out = encode(pool, poolOffset, length);
  poolOffset += length;
  return out;
}

function encode(bytes: Buffer, start: number, length: number): string {
  let out = '';
  for (let i = start; i < start + length; i++) out += ALPHABET[bytes[i] & 31];
  return out;
}

export type IdPrefix =
  | 'ws'
  | 'per'
  | 'mem'
  | 'ses'
  | 'key'
  | 'inb'
  | 'ch'
  | 'ct'
  | 'cf'
  | 'cv'
  | 'm'
  | 'att'
  | 'eml'
  | 'wh'
  | 'dlv'
  | 'wha'
  | 'msg'
  | 'mig'
  | 'bc'
  | 'job'
  | 'srv'
  | 'inv'
  | 'code'
  | 'fb'
  | 'rt'
  | 'sub'
  | 'evt'
  | 'cs'
  | 'dig'
  | 'push'
  | 'pk'
  | 'mlog'
  | 'sil'
  | 'sr'
  | 'mcl'
  | 'ntf'
  | 'rr'
  | 'ap'
  | 'aev'
  | 'avi'
  | 'cmv'
  | 'team'
  | 'rule'
  | 'arun'
  | 'mac'
  | 'imp'
  | 'seg'
  | 'view';

export function newId(prefix: IdPrefix, nowMs?: number): string {
  return `${prefix}_${sortableId(nowMs)}`;
}
