import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/platform/log.js';

function logged(fields: Record<string, unknown>): Record<string, any> {
  const lines: string[] = [];
  createLogger({ write: (l) => lines.push(l) }).info('line', fields);
  assert.equal(lines.length, 1);
  return JSON.parse(lines[0]);
}

describe('log redaction', () => {
  test('recipient addresses and lists are hidden, at any depth', () => {
    const line = logged({
      recipients: ['a@rcpt.example.org', 'b@rcpt.example.org'],
      recipient: 'c@rcpt.example.org',
      broadcast: { bcc_recipients: 'd@rcpt.example.org', password: 'hunter2', smtp_pass: 'hunter3', passphrase: 'hunter4' },
    });
    assert.equal(line.recipients, '[redacted]');
    assert.equal(line.recipient, '[redacted]');
    assert.equal(line.broadcast.bcc_recipients, '[redacted]');
    for (const k of ['password', 'smtp_pass', 'passphrase']) assert.equal(line.broadcast[k], '[redacted]', k);
    assert.ok(!JSON.stringify(line).includes('rcpt.example.org'));
  });

  test('counts of recipients are shown (the retention line)', () => {
    const line = logged({ deleted: { broadcast_recipients: 1200, passkey_challenges: 2, events: 3 }, recipients: 4 });
    assert.equal(line.deleted.broadcast_recipients, 1200);
    assert.equal(line.deleted.passkey_challenges, 2);
    assert.equal(line.deleted.events, 3);
    assert.equal(line.recipients, 4);
  });
});

describe('log levels and line shape', () => {
  function capture(level?: 'debug' | 'info' | 'warn' | 'error') {
    const lines: { line: Record<string, any>; urgent: boolean }[] = [];
    const log = createLogger({ level, write: (l, urgent) => lines.push({ line: JSON.parse(l), urgent }) });
    return { log, lines };
  }

  test('a line below the level is not written; the others carry time, level, msg and their fields', () => {
    const { log, lines } = capture('info');
    log.debug('hidden', { n: 1 });
    log.info('shown', { n: 2 });
    log.child({ component: 'x' }).debug('hidden too');
    log.child({ component: 'x' }).warn('warned', { n: 3 });
    assert.deepEqual(
      lines.map((l) => [l.line.level, l.line.msg, l.line.n, l.line.component]),
      [
        ['info', 'shown', 2, undefined],
        ['warn', 'warned', 3, 'x'],
      ],
    );
    assert.ok(!Number.isNaN(Date.parse(lines[0].line.time)) && lines[0].line.time.endsWith('Z'));
    assert.deepEqual(Object.keys(lines[1].line).slice(0, 4), ['time', 'level', 'msg', 'component'], 'the child logger’s fields come first');
  });

  test('warnings and errors are written at once (urgent); info and debug may wait for the batch', () => {
    const { log, lines } = capture('debug');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e', { error: new Error('boom') });
    assert.deepEqual(
      lines.map((l) => [l.line.level, l.urgent]),
      [
        ['debug', false],
        ['info', false],
        ['warn', true],
        ['error', true],
      ],
    );
    assert.deepEqual(lines[3].line.error, { message: 'boom' });
  });

  test('at level error only errors are written; a child logger’s secret fields are redacted too', () => {
    const { log, lines } = capture('error');
    const child = log.child({ api_key: 'svc_sk_secret' });
    child.warn('w');
    child.error('e');
    assert.equal(lines.length, 1);
    assert.equal(lines[0].line.api_key, '[redacted]');
  });
});

describe('log line building', () => {
  // What the line must equal: the fields merged over time, level and msg, cleaned, as one object.
  function expected(level: string, msg: string, base: Record<string, unknown>, fields: Record<string, unknown>) {
    return { level, msg, ...base, ...fields };
  }

  test('the same object whether fields repeat a name or not: later fields win, undefined values are left out', () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{}, { method: 'GET', status: 200, nested: { a: [1, { b: 'x' }] }, gone: undefined, when: null }],
      [{ component: 'smtp' }, { component: 'imap', n: 1 }],
      [{}, { msg: 'a field named msg', level: 'shadowed' }],
      [{ time: 'base time' }, { other: true }],
      [{ 'quote"key': 'va\\lue\n' }, { ünï: '☃' }],
    ];
    for (const [base, fields] of cases) {
      const lines: string[] = [];
      createLogger({ write: (l) => lines.push(l) })
        .child(base)
        .info('hello', fields);
      const line = JSON.parse(lines[0]);
      const { time, ...rest } = line;
      assert.equal(typeof time, 'string');
      const want = JSON.parse(JSON.stringify(expected('info', 'hello', base, fields)));
      if ('time' in base || 'time' in fields) {
        want.time = time;
        assert.equal(time, (fields.time ?? base.time) as string);
      }
      const { time: _t, ...wantRest } = want;
      assert.deepEqual(rest, wantRest, JSON.stringify([base, fields]));
      assert.ok(lines[0].endsWith('}\n'));
    }
  });

  test('strings are written as JSON.stringify writes them (quotes, backslashes, controls, surrogates)', () => {
    const strings = ['plain /v1/workspace', 'q"uote', 'back\\slash', 'nl\n tab\t', '\u0000\u001f\u007f', 'lone \ud800 \udfff', 'pair 😀', 'ünï ☃ \u2028'];
    for (const value of strings) {
      const lines: string[] = [];
      createLogger({ write: (l) => lines.push(l) }).info(value, { field: value });
      assert.ok(lines[0].includes(`"msg":${JSON.stringify(value)},"field":${JSON.stringify(value)}}`), JSON.stringify(value));
    }
  });

  test('secrets are redacted at the top level and nested; nested objects are written whole', () => {
    const lines: string[] = [];
    createLogger({ write: (l) => lines.push(l) }).info('x', { token: 't', inner: { authorization: 'a', deep: { deeper: { deepest: { x: { y: 1 } } } } } });
    const line = JSON.parse(lines[0]);
    assert.equal(line.token, '[redacted]');
    assert.equal(line.inner.authorization, '[redacted]');
    assert.deepEqual(line.inner.deep, { deeper: { deepest: { x: { y: 1 } } } });
  });
});

describe('log writing to stderr', () => {
  test('batched lines reach stderr whole and in order: non-ASCII, lines longer than a batch, more than a batch, at exit', async () => {
    const { spawn } = await import('node:child_process');
    const path = await import('node:path');
    const logModule = path.resolve('dist/src/platform/log.js');
    const script = `
      const { createLogger } = await import(${JSON.stringify(logModule)});
      const log = createLogger();
      for (let i = 0; i < 3000; i++) log.info('line', { i, note: i % 7 === 0 ? 'ünïcödé ☃ '.repeat(20) : 'plain' });
      log.info('long', { note: '☃'.repeat(30000) });
      log.warn('urgent', { i: 3001 });
      for (let i = 3002; i < 3100; i++) log.info('line', { i });
      setTimeout(() => { for (let i = 3100; i < 3200; i++) log.info('line', { i }); process.exit(0); }, 50);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    // 'close': the process has exited and its stderr is read to the end.
    const code = await new Promise((resolve) => child.once('close', resolve));
    assert.equal(code, 0, err.slice(0, 500));
    const lines = err
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 3200);
    const numbered = lines.filter((l) => l.i !== undefined).map((l) => l.i);
    assert.deepEqual(
      numbered,
      Array.from({ length: 3200 }, (_, i) => i).filter((i) => i !== 3000),
      'every numbered line, in order',
    );
    assert.equal(lines[3000].msg, 'long');
    assert.ok(lines[3000].note === '☃'.repeat(30000), 'the long line whole');
    assert.ok(lines[7].note === 'ünïcödé ☃ '.repeat(20), 'non-ASCII text whole');
  });
});
