// `matches` conditions: a regular expression a manager typed runs against customer text on every
// inbound message, so it must not be able to take long (ReDoS). JavaScript's engine backtracks, so
// instead of trusting it with any pattern we accept only patterns whose worst case stays small:
// at most MAX_PATTERN_CHARS, no back-references, no look-arounds, no quantified groups (no nested
// repetition: star height 1), at most MAX_UNBOUNDED unbounded repetitions (*, +, {n,}) and bounded
// ones up to {0,MAX_BOUND}; and the text tested is cut at MAX_TESTED_CHARS. With k unbounded
// repetitions the worst case is about n^k steps, so 2 and 4,000 characters bound it near 1.6e7.
// Matching ignores case.
import { MAX_PATTERN_CHARS } from './schema.js';

export const MAX_UNBOUNDED = 2;
export const MAX_BOUND = 100;
export const MAX_TESTED_CHARS = 4000;

/** Why the pattern is refused, or null when it is safe to use. */
export function patternProblem(pattern: string): string | null {
  if (pattern.length === 0) return 'the pattern is empty';
  if (pattern.length > MAX_PATTERN_CHARS) return `at most ${MAX_PATTERN_CHARS} characters`;
  try {
    new RegExp(pattern, 'iu');
  } catch {
    return 'not a valid regular expression';
  }
  let unbounded = 0;
  let inClass = false;
  // What the previous token was: a group's end may not be quantified.
  let previous: 'atom' | 'group_end' | 'quantifier' | 'none' = 'none';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && /[1-9k]/.test(next)) return 'back-references are not allowed';
      i++;
      if (!inClass) previous = 'atom';
      continue;
    }
    if (inClass) {
      if (ch === ']') {
        inClass = false;
        previous = 'atom';
      }
      continue;
    }
    if (ch === '[') {
      inClass = true;
      continue;
    }
    if (ch === '(') {
      if (pattern[i + 1] === '?') {
        const kind = pattern.slice(i + 2, i + 4);
        if (kind.startsWith('=') || kind.startsWith('!') || kind === '<=' || kind === '<!') return 'look-arounds are not allowed';
      }
      previous = 'none';
      continue;
    }
    if (ch === ')') {
      previous = 'group_end';
      continue;
    }
    const quantifier = ch === '*' || ch === '+' || ch === '?' || (ch === '{' && /^\{\d+(,\d*)?\}/.test(pattern.slice(i)));
    if (quantifier) {
      if (previous === 'group_end') return 'a group may not be repeated (write the repetition inside it)';
      if (previous === 'quantifier' && ch !== '?') return 'a repetition may not be repeated';
      if (ch === '*' || ch === '+') unbounded++;
      if (ch === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i))!;
        if (m[2] !== undefined && m[3] === '') unbounded++;
        else if (Number(m[3] ?? m[1]) > MAX_BOUND) return `a counted repetition may go up to ${MAX_BOUND}`;
        i += m[0].length - 1;
      }
      if (unbounded > MAX_UNBOUNDED) return `at most ${MAX_UNBOUNDED} unbounded repetitions (* + {n,})`;
      previous = 'quantifier';
      continue;
    }
    previous = ch === '|' ? 'none' : 'atom';
  }
  return null;
}

const compiled = new Map<string, RegExp>();

/** Tests a pattern that passed patternProblem (a refused one never matches). */
export function patternMatches(pattern: string, text: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    if (patternProblem(pattern)) return false;
    re = new RegExp(pattern, 'iu');
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re.test(text.length > MAX_TESTED_CHARS ? text.slice(0, MAX_TESTED_CHARS) : text);
}
