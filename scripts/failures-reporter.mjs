// A node:test reporter that prints, once every file has ended, each failed test again: its file,
// its place among the suites, the error with its stack, and the last lines its file wrote to stderr.
// CI logs show only their tail, and the TAP output states a failure where it happened, long before
// the end of a ~25 minute run. Used by scripts/run-tests.mjs beside the TAP reporter.
import path from 'node:path';

const STDERR_LINES = 40;
const STACK_LINES = 20;

export default async function* failuresReporter(source) {
  const titles = new Map(); // file -> names of the tests under way, by nesting
  const stderr = new Map(); // file -> its last lines on stderr
  const failures = [];
  for await (const event of source) {
    const data = event.data ?? {};
    const file = data.file ?? '(no file)';
    if (event.type === 'test:start') {
      const stack = titles.get(file) ?? [];
      stack.length = data.nesting;
      stack.push(data.name);
      titles.set(file, stack);
    } else if (event.type === 'test:stderr') {
      const lines = stderr.get(file) ?? [];
      lines.push(...String(data.message).replace(/\n$/, '').split('\n'));
      stderr.set(file, lines.slice(-STDERR_LINES));
    } else if (event.type === 'test:fail') {
      const error = data.details?.error;
      // A suite (or file) whose tests failed: those are listed themselves.
      if (error?.failureType === 'subtestsFailed') continue;
      const stack = [...(titles.get(file) ?? [])];
      stack.length = data.nesting;
      stack.push(data.name);
      failures.push({ file, title: stack.filter((t) => t !== file).join(' > ') || '(the file itself)', error });
    }
  }
  if (failures.length === 0) return;
  let out = `\n== ${failures.length} failed test(s), again:\n`;
  const files = new Set();
  for (const { file, title, error } of failures) {
    files.add(file);
    out += `\n-- ${relative(file)}: ${title}\n`;
    out += `   ${error?.failureType ?? 'failure'}: ${indent(describe(error))}\n`;
  }
  for (const file of files) {
    const lines = stderr.get(file);
    if (!lines?.length) continue;
    out += `\n-- last ${lines.length} line(s) on stderr of ${relative(file)}:\n${lines.map((l) => `   ${l}`).join('\n')}\n`;
  }
  yield out;
}

function relative(file) {
  return path.isAbsolute(file) ? path.relative(process.cwd(), file) : file;
}

/** The error's own stack (the test's failure wraps it as its cause), trimmed. */
function describe(error) {
  if (!error) return '(no error)';
  const cause = error.cause ?? error;
  const text = typeof cause === 'object' && cause !== null ? (cause.stack ?? cause.message ?? String(cause)) : String(cause);
  // Node's own frames (the test runner's) say nothing about the failure.
  const lines = String(text)
    .split('\n')
    .filter((line) => !/^\s+at (?:.*\()?node:/.test(line));
  const extra = [];
  if (typeof cause === 'object' && cause !== null && 'actual' in cause && 'expected' in cause) {
    extra.push(`actual: ${inspect(cause.actual)}`, `expected: ${inspect(cause.expected)}`);
  }
  return [...lines.slice(0, STACK_LINES), ...(lines.length > STACK_LINES ? ['…'] : []), ...extra].join('\n');
}

function inspect(value) {
  try {
    const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value, null, 0);
    return text === undefined ? String(value) : text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
  } catch {
    return String(value);
  }
}

function indent(text) {
  return text.split('\n').join('\n   ');
}
