import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { requestApproval } from '../../src/broadcasts/governance.js';
import { addDigestLine, DIGEST_INTERVAL_MS } from '../../src/operator-digest/service.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { getWorkspace } from '../../src/workspaces/service.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('operator digest', () => {
  let s: TestServer;
  let operator: SmtpSink;
  let clock: ManualClock;

  before(async () => {
    operator = await startSmtpSink();
    s = await startTestServer({
      env: {
        SVC_SIGNUP: 'open',
        SVC_OPERATOR_EMAIL: 'operator@ops.example',
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(operator.port),
        SVC_SMTP_TLS: 'none',
        SVC_SMTP_FROM: 'svc@ops.example',
      },
    });
    clock = s.clock as ManualClock;
    await s.app.jobs.stop();
  });
  after(async () => {
    await s.stop();
    await operator.close();
  });

  test('lines are batched: at most one e-mail every 5 minutes, grouped by kind', async () => {
    const seed = await seedWorkspace(s.app, { origin: 'signup', name: 'Batchers' });
    const ws = await getWorkspace(s.app, seed.workspaceId);
    await requestApproval(s.app, ws, 'owner@batchers.example', {
      website: 'https://batchers.example',
      senders: 'the team, release notes',
      consent: 'signed up in the app',
    });
    await s.app.jobs.drain();
    const first = await operator.waitFor(1);
    assert.equal(first.length, 1);
    assert.deepEqual(first[0].to, ['operator@ops.example']);
    assert.equal(first[0].parsed.subject, 'svc operator digest: 1 item');
    assert.match(
      first[0].parsed.text!,
      /Broadcast approval requested \(1\)\n- workspace "Batchers" \(ws_[0-9a-z]+\): owner@batchers\.example asks to send broadcasts\. Website: https:\/\/batchers\.example\. Who sends and what: the team, release notes\. How subscribers agreed: signed up in the app\./,
    );

    // Three more lines within the next minutes: nothing is mailed before 5 minutes have passed.
    clock.advance(MINUTE);
    await addDigestLine(s.app, {
      kind: 'broadcast_paused',
      workspaceId: seed.workspaceId,
      text: 'workspace "Batchers", broadcast bc_x: paused itself, reason sender_error (535 authentication failed)',
    });
    await addDigestLine(s.app, { kind: 'workspace_suspended', workspaceId: seed.workspaceId, text: 'workspace "Batchers" suspended automatically' });
    clock.advance(2 * MINUTE);
    await addDigestLine(s.app, {
      kind: 'broadcast_paused',
      workspaceId: seed.workspaceId,
      text: 'workspace "Batchers", broadcast bc_y: paused itself, reason bounce_rate',
    });
    await s.app.jobs.drain();
    assert.equal(operator.messages.length, 1);
    clock.advance(DIGEST_INTERVAL_MS - 3 * MINUTE - 1);
    await s.app.jobs.drain();
    assert.equal(operator.messages.length, 1);
    clock.advance(1);
    await s.app.jobs.drain();
    const second = (await operator.waitFor(2))[1];
    assert.equal(second.parsed.subject, 'svc operator digest: 3 items');
    const text = second.parsed.text!;
    // The spec's order of line kinds.
    assert.ok(text.indexOf('Workspace suspended from broadcasts (1)') < text.indexOf('Broadcast paused (2)'));
    assert.match(text, /bc_x[\s\S]*bc_y/);
    await s.app.jobs.drain();
    assert.equal(operator.messages.length, 2, 'sent lines are not sent again');
  });

  test('when the server’s SMTP account fails, the lines wait and go out later', async () => {
    const count = operator.messages.length;
    clock.advance(DIGEST_INTERVAL_MS);
    operator.failWith(451);
    await addDigestLine(s.app, { kind: 'tenant_paused', text: 'tenant of inbox "Support" paused' });
    await s.app.jobs.drain();
    assert.ok(s.logs.some((l) => l.msg === 'mail not sent' && l.purpose === 'operator digest'));
    operator.failWith(null);
    clock.advance(DIGEST_INTERVAL_MS);
    await s.app.jobs.drain();
    const mail = (await operator.waitFor(count + 1))[count];
    assert.match(mail.parsed.text!, /Tenant paused \(1\)/);
  });
});
