import fs from 'node:fs';
// consola/core: the main entry also loads consola's terminal reporters, which make an Intl.Segmenter
// (ICU's break-iterator data: 2.5 MB of RSS in a bare Node) that the JSON reporter never uses.
import { type ConsolaInstance, createConsola, LogLevels, type LogObject } from 'consola/core';

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

// Field names whose values never reach a log line, whatever the caller passes.
// (`pass…` only as a word of its own: `passkey_challenges` in the retention line is a count.)
const SECRET_FIELD = /pass(word|wd|phrase)?s?(?![a-z])|secret|token|authorization|cookie|api_?key|^code$|^body$|^html$|^text$|^raw$/i;
// Recipients (an address or a list of them) never reach a log line either; a count of them
// (`broadcast_recipients: 120` in the retention line) is kept.
const RECIPIENT_FIELD = /recipients?$/i;

// The same few field names come on every line: what the patterns say about a name is kept, with
// the name as it is written in a line (`,"name":`).
interface FieldName {
  prefix: string;
  secret: boolean;
  recipient: boolean;
}
const fieldNames = new Map<string, FieldName>();

function fieldName(key: string): FieldName {
  let name = fieldNames.get(key);
  if (name === undefined) {
    name = { prefix: `,${JSON.stringify(key)}:`, secret: SECRET_FIELD.test(key), recipient: RECIPIENT_FIELD.test(key) };
    if (fieldNames.size < 10_000) fieldNames.set(key, name);
  }
  return name;
}

function hiddenName(name: FieldName, value: unknown): boolean {
  return name.secret || (name.recipient && typeof value !== 'number' && typeof value !== 'bigint');
}

function hidden(key: string, value: unknown): boolean {
  return hiddenName(fieldName(key), value);
}

function clean(value: unknown, depth = 0): unknown {
  if (value instanceof Error) {
    const out: LogFields = { message: value.message };
    const code = (value as { code?: unknown }).code;
    if (code !== undefined) out.code = code;
    return out;
  }
  if (value === null || typeof value !== 'object' || depth > 3) return value;
  if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1));
  const out: LogFields = {};
  for (const [k, v] of Object.entries(value)) out[k] = hidden(k, v) ? '[redacted]' : clean(v, depth + 1);
  return out;
}

const LEVEL_NAMES: Record<number, LogLevel> = { 0: 'error', 1: 'warn', 2: 'info', 3: 'info', 4: 'debug', 5: 'debug' };

// Lines written within the same millisecond share its ISO text.
let lastTimeMs = Number.NaN;
let lastTime = '';

function isoTime(date: Date): string {
  const ms = date.getTime();
  if (ms !== lastTimeMs) {
    lastTime = date.toISOString();
    lastTimeMs = ms;
  }
  return lastTime;
}

/** One JSON object per line: time, level, msg, then the fields (a child logger's first). */
function jsonLine(date: Date, level: LogLevel, msg: string, base: LogFields, fields: LogFields | undefined): string {
  const time = isoTime(date);
  // A field named like another one (or like time, level, msg) takes that one's place: the object
  // below does it. Otherwise the line is written field by field, without copying the fields first.
  if (repeatsAName(base, fields)) {
    const line: LogFields = { time, level, msg: String(msg) };
    Object.assign(line, clean(base) as LogFields);
    if (fields) Object.assign(line, clean(fields) as LogFields);
    return JSON.stringify(line) + '\n';
  }
  let text = `{"time":"${time}","level":"${level}","msg":${stringJson(String(msg))}`;
  text = appendFields(text, base);
  if (fields) text = appendFields(text, fields);
  return text + '}\n';
}

function appendFields(text: string, own: LogFields): string {
  for (const key in own) {
    if (!Object.hasOwn(own, key)) continue;
    const value = own[key];
    const name = fieldName(key);
    const json = hiddenName(name, value) ? '"[redacted]"' : fieldJson(value);
    if (json !== undefined) text += name.prefix + json;
  }
  return text;
}

// What JSON.stringify escapes in a string (quote, backslash, control characters, and surrogates:
// a lone one is escaped, a pair goes the slow way too).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON: most need no escaping, and quoting them is cheaper than JSON.stringify. */
function stringJson(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/** A field's value as JSON (undefined leaves the field out, as JSON.stringify does). */
function fieldJson(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'string') return stringJson(value);
  return JSON.stringify(clean(value, 1));
}

function repeatsAName(base: LogFields, fields: LogFields | undefined): boolean {
  if (namesALineField(base) || (fields && namesALineField(fields))) return true;
  if (!fields) return false;
  for (const key in base) if (Object.hasOwn(base, key) && Object.hasOwn(fields, key)) return true;
  return false;
}

function namesALineField(own: LogFields): boolean {
  return Object.hasOwn(own, 'time') || Object.hasOwn(own, 'level') || Object.hasOwn(own, 'msg');
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const BATCH_BYTES = 64 * 1024;

/**
 * stderr writer that gathers lines for up to 25 ms (or 64 KiB) into one write: a line per request
 * would otherwise cost a system call per request. Lines are copied into a buffer as they come, so
 * that a line's text dies young instead of waiting in the heap for the write. Warnings and errors go
 * out at once, and whatever is pending is written synchronously when the process exits.
 */
function batchedStderr(): (line: string, urgent: boolean) => void {
  let pending = Buffer.allocUnsafe(BATCH_BYTES);
  let used = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (used === 0) return;
    const text = pending.subarray(0, used);
    // The written part goes with the write; the next lines go into a new buffer.
    pending = Buffer.allocUnsafe(BATCH_BYTES);
    used = 0;
    process.stderr.write(text);
  };
  process.once('exit', () => {
    if (used) fs.writeSync(2, pending, 0, used);
    used = 0;
  });
  return (line, urgent) => {
    // A UTF-16 unit takes at most 3 bytes in UTF-8.
    if (used + line.length * 3 > BATCH_BYTES) flush();
    if (line.length * 3 > BATCH_BYTES) process.stderr.write(line);
    else used += pending.write(line, used);
    if (urgent) flush();
    else timer ??= setTimeout(flush, 25);
  };
}

function jsonReporter(write: (line: string, urgent: boolean) => void) {
  return {
    log(obj: LogObject) {
      const [msg, base, fields] = obj.args as [string, LogFields, LogFields | undefined];
      write(jsonLine(obj.date, LEVEL_NAMES[obj.level] ?? 'info', msg, base, fields), obj.level <= 1);
    },
  };
}

export function createLogger(opts: { level?: LogLevel; write?: (line: string, urgent: boolean) => void } = {}): Logger {
  const consola = createConsola({
    level: LogLevels[opts.level ?? 'info'],
    // consola folds repeated identical lines into "(repeated n times)" by default; every line an
    // operator may alert on must be written, so that is off.
    throttle: 0,
    reporters: [jsonReporter(opts.write ?? batchedStderr())],
  });
  return wrap(consola, {});
}

// The fields are handed over unmerged: consola drops a line below its level before the reporter
// runs, so nothing is copied or cleaned for it.
function wrap(consola: ConsolaInstance, base: LogFields): Logger {
  const at = (fn: (...args: unknown[]) => void) => (msg: string, fields?: LogFields) => fn(msg, base, fields);
  return {
    debug: at(consola.debug),
    info: at(consola.info),
    warn: at(consola.warn),
    error: at(consola.error),
    child: (fields) => wrap(consola, { ...base, ...fields }),
  };
}
