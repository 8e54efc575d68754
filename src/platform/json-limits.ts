// Limits on JSON values that come from outside: how deep objects and arrays nest, and strings (and
// keys) that are not valid Unicode or hold U+0000 (which Postgres text cannot store). The walk
// keeps its own stack, so a hostile value cannot exhaust the call stack; it stops at the first problem.
import { invalid } from './errors.js';

/** How deep a free-form value (contact attributes, feedback metadata) may nest; the value itself is level 1. */
export const FREE_JSON_MAX_DEPTH = 8;

export type JsonPath = (string | number)[];

export interface JsonProblem {
  path: JsonPath;
  message: string;
}

// With the u flag a well-paired surrogate is one code point above U+FFFF, so only lone halves match.
const LONE_SURROGATE = /[\ud800-\udfff]/u;

export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Why a string from outside cannot be taken as text, or null when it can. */
function textProblem(text: string): string | null {
  if (!isWellFormedText(text)) return 'is not valid Unicode (a lone UTF-16 surrogate, e.g. \\ud800)';
  if (text.includes('\u0000')) return 'must not contain U+0000 (NUL)';
  return null;
}

interface Step {
  value: unknown;
  depth: number;
  key: string | number | undefined;
  parent: Step | undefined;
}

function pathOf(step: Step | undefined, last?: string | number): JsonPath {
  const path: JsonPath = last === undefined ? [] : [last];
  for (let s = step; s && s.key !== undefined; s = s.parent) path.unshift(s.key);
  return path;
}

/**
 * The first place where `value` nests objects and arrays more than `maxDepth` levels (the value
 * itself is level 1, a scalar is level 0) or holds a string or key that is not well-formed Unicode
 * or holds U+0000.
 */
export function findJsonProblem(value: unknown, maxDepth: number): JsonProblem | null {
  const stack: Step[] = [{ value, depth: 0, key: undefined, parent: undefined }];
  while (stack.length) {
    const step = stack.pop()!;
    const v = step.value;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return { path: pathOf(step), message: `text ${problem}` };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    const depth = step.depth + 1;
    if (depth > maxDepth) return { path: pathOf(step), message: `objects and arrays may nest at most ${maxDepth} levels deep` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth, key: i, parent: step });
    } else {
      for (const [k, child] of Object.entries(v)) {
        const problem = textProblem(k);
        if (problem) return { path: pathOf(step, k), message: `key ${problem}` };
        stack.push({ value: child, depth, key: k, parent: step });
      }
    }
  }
  return null;
}

/** A free-form value's problem: too deep (FREE_JSON_MAX_DEPTH), not valid Unicode, or more than `maxBytes` of JSON. */
export function freeJsonProblem(value: unknown, maxBytes: number): JsonProblem | null {
  const problem = findJsonProblem(value, FREE_JSON_MAX_DEPTH);
  if (problem) return problem;
  // Safe to serialize: the depth is bounded now.
  if (Buffer.byteLength(JSON.stringify(value) ?? '') > maxBytes) return { path: [], message: `must be at most ${maxBytes} bytes of JSON` };
  return null;
}

/** A path as the API shows it in `issues`: keys and indexes joined by dots; text that is not Unicode shows U+FFFD. */
export function formatJsonPath(path: JsonPath): string {
  return path.map((p) => String(p).replace(/[\ud800-\udfff\u0000]/gu, '\ufffd')).join('.');
}

/** For services: refuses a free-form field (400 invalid_request, the path under `field` in `issues`). */
export function checkFreeJson(field: string, value: unknown, maxBytes: number): void {
  const problem = freeJsonProblem(value, maxBytes);
  if (!problem) return;
  const path = formatJsonPath([field, ...problem.path]);
  throw invalid(`${path}: ${problem.message}`, { issues: [{ path, message: problem.message }] });
}
