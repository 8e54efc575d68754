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
