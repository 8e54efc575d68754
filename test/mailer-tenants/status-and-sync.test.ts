// A per-inbox Amazon SES tenant's sending status and the operator's commands: a tenant paused by the
// reputation policy pauses only its inbox's broadcasts and is reinstated from the command line; a
// pause by SES itself is not; `svc inbox mailer-tenant sync` prints or makes what is missing, and
// provider errors are stored and shown, never failing a request.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import type { AwsFake } from '../helpers/aws.js';
import { addresses, createBroadcast, getBroadcast, postSns, schedule, TOPIC } from '../helpers/broadcasts.js';
import type { Seed } from '../helpers/fixtures.js';
import { deliverMail } from '../helpers/mail.js';
import { ACCOUNT, MANAGED_KEY, SES_HOST, SMTP_PASSWORD, savedSignalJob, tenantsScene } from '../helpers/mailer-tenants.js';
import type { TestServer } from '../helpers/server.js';
import type { SesFake } from '../helpers/ses-fake.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

describe('SES tenant pauses and the sync command', () => {
  let s: TestServer;
  let aws: AwsFake;
  let ses: SesFake;
  let sink: SmtpSink;
  let operator: SmtpSink;
  let clock: ManualClock;
  let seed: Seed;
  let inboxC: string;
  const { svc, managedChannel, tenantOf, row } = tenantsScene((started) => ({ s, aws, ses, sink, operator, clock, seed, inboxC } = started));

  // Each inbox has its managed channel and tenant, as provisioning.test.ts makes them.
  before(async () => {
    await managedChannel(seed.inboxId, 'news@shop.example');
    await managedChannel(inboxC, 'sales@shop.example');
  });

  test('a disabled tenant pauses only its inbox’s broadcasts (reason mailer_tenant), refuses schedule and resume, and tells the operator', async () => {
    const channelC = (await s.app.db.selectFrom('channels').select('id').where('address', '=', 'sales@shop.example').executeTakeFirstOrThrow()).id;
    const channelA = (await s.app.db.selectFrom('channels').select('id').where('address', '=', 'news@shop.example').executeTakeFirstOrThrow()).id;
    const later = new Date(clock.now().getTime() + 60 * MINUTE).toISOString();
    const inA = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(2, 'pa'), { channel_id: channelA });
    const inC = await createBroadcast(s, seed.apiKey, inboxC, addresses(2, 'pc'), { channel_id: channelC });
    await schedule(s, seed.apiKey, inA.id, { send_at: later });
    await schedule(s, seed.apiKey, inC.id, { send_at: later });

    ses.setStatus(`svc-${seed.inboxId}`, 'customer', 'DISABLED', 'bounce rate above the reputation policy');
    // A tenant event (EventBridge through the SNS topic) only triggers a re-read; its content is not trusted.
    const event = {
      version: '0',
      'detail-type': 'Sending Status Disabled',
      source: 'aws.ses',
      account: ACCOUNT,
      region: 'us-east-1',
      resources: [tenantOf(seed.inboxId)!.arn],
      detail: { sendingStatus: 'ENABLED (not trusted)' },
    };
    assert.equal((await postSns(s, aws.sns.notification(TOPIC, event))).body.result, 'tenant_event');
    await s.app.jobs.drain();
    const a = await getBroadcast(s, seed.apiKey, inA.id);
    assert.equal(a.status, 'paused');
    assert.equal(a.pause_reason, 'mailer_tenant');
    assert.match(a.pause_detail!, /reputation policy paused the tenant svc-inb_[0-9a-z]+: bounce rate above/);
    assert.equal((await getBroadcast(s, seed.apiKey, inC.id)).status, 'scheduled', 'other inboxes keep sending');
    const stored = (await row(seed.inboxId))!;
    assert.deepEqual([stored.sending_status, stored.paused_by], ['DISABLED', 'reputation_policy']);

    const resume = await s.request('POST', `/v1/broadcasts/${inA.id}/resume`, { token: seed.apiKey });
    assert.equal(resume.status, 409);
    assert.equal(resume.body.error.code, 'mailer_tenant_blocked');
    const fresh = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(1, 'pf'), { channel_id: channelA });
    const scheduleFresh = await schedule(s, seed.apiKey, fresh.id);
    assert.equal(scheduleFresh.status, 409);
    assert.equal(scheduleFresh.body.error.code, 'mailer_tenant_blocked');

    // Support replies are still attempted.
    const inbound = await deliverMail(s, 'news@shop.example', { Subject: 'Still there?' });
    await s.request('POST', `/v1/conversations/${inbound.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'Yes.' } });
    const before = sink.messages.length;
    await s.app.jobs.drain();
    await sink.waitFor(before + 1);

    clock.advance(5 * MINUTE);
    await s.app.jobs.drain();
    const digest = operator.messages.map((m) => m.parsed.text).join('\n');
    assert.match(digest, /Tenant paused \(1\)/);
    assert.match(
      digest,
      new RegExp(
        `inbox "Support" \\(${seed.inboxId}\\): tenant svc-${seed.inboxId} paused by the reputation policy; cause: bounce rate above the reputation policy`,
      ),
    );

    // show: stored state only, no provider call.
    const calls = ses.calls.length;
    const shown = await svc(['inbox', 'mailer-tenant', 'show', '--workspace', seed.workspaceId, '--inbox', seed.inboxId]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^sending status\tDISABLED, paused by the reputation policy/m);
    assert.match(shown.stdout, /^cause\tbounce rate above the reputation policy$/m);
    assert.match(shown.stdout, /^resources\tCONFIGURATION_SET arn:aws:ses:us-east-1:111111111111:configuration-set\/svc-feedback-set, EMAIL_IDENTITY/m);
    assert.match(shown.stdout, /^channel\tch_[0-9a-z]+ news@shop\.example managed/m);
    assert.equal(ses.calls.length, calls);

    // Reinstate: the customer-managed status becomes REINSTATED; broadcasts stay paused until a member resumes.
    const reinstated = await svc(['inbox', 'mailer-tenant', 'reinstate', '--workspace', seed.workspaceId, '--inbox', seed.inboxId]);
    assert.equal(reinstated.code, 0, reinstated.stderr);
    assert.equal(tenantOf(seed.inboxId)!.customer.Status, 'REINSTATED');
    assert.equal((await row(seed.inboxId))!.sending_status, 'REINSTATED');
    assert.equal((await getBroadcast(s, seed.apiKey, inA.id)).status, 'paused');
    assert.equal((await s.request('POST', `/v1/broadcasts/${inA.id}/resume`, { token: seed.apiKey })).status, 200);
    assert.equal((await s.request('POST', `/v1/broadcasts/${inA.id}/cancel`, { token: seed.apiKey })).status, 200);
    assert.equal((await s.request('POST', `/v1/broadcasts/${inC.id}/cancel`, { token: seed.apiKey })).status, 200);
  });

  test('a pause by Amazon SES itself: found by the five-minute read, shown as needing AWS support, not reinstated', async () => {
    ses.setStatus(`svc-${inboxC}`, 'aws', 'DISABLED', 'account review');
    clock.advance(5 * MINUTE);
    await s.app.jobs.drain();
    const stored = (await row(inboxC))!;
    assert.deepEqual([stored.sending_status, stored.paused_by, stored.cause], ['DISABLED', 'provider', 'account review']);
    const shown = await svc(['inbox', 'mailer-tenant', 'show', '--workspace', seed.workspaceId, '--inbox', 'sales']);
    assert.match(shown.stdout, /only a case with AWS support lifts it/);
    const refused = await svc(['inbox', 'mailer-tenant', 'reinstate', '--workspace', seed.workspaceId, '--inbox', 'sales']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /only a case with AWS support lifts this pause/);
    assert.equal(tenantOf(inboxC)!.customer.Status, 'ENABLED');
  });

  test('sync --dry-run only prints; sync creates; provider errors are stored and shown, never failing a request', async () => {
    const inboxD = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' })).id;
    ses.failNext('CreateTenant', { status: 403, type: 'AccessDeniedException', message: 'User is not authorized to perform ses:CreateTenant' });
    const r = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: {
        kind: 'email',
        inbox_id: inboxD,
        name: 'Billing',
        address: 'billing@shop.example',
        smtp_host: SES_HOST,
        smtp_port: sink.port,
        tls: 'none',
        smtp_username: MANAGED_KEY,
        smtp_password: SMTP_PASSWORD,
      },
    });
    assert.equal(r.status, 201, 'the save succeeds whatever the provider says');
    assert.ok(await savedSignalJob(s.app.db, r.body.id), 'the upkeep is stored with the channel');
    await s.app.jobs.drain();
    assert.ok(
      await s.app.db.selectFrom('jobs').select('id').where('unique_key', '=', `mailer.tenant_upkeep:${inboxD}`).executeTakeFirst(),
      'the failed upkeep waits for its retry',
    );
    assert.equal(tenantOf(inboxD), undefined);
    assert.match((await row(inboxD))!.last_error!, /AccessDeniedException: User is not authorized/);
    const shown = await svc(['inbox', 'mailer-tenant', 'show', '--workspace', seed.workspaceId, '--inbox', inboxD]);
    assert.match(shown.stdout, /^last error\tAccessDeniedException/m);
    await s.app.db.deleteFrom('jobs').where('unique_key', '=', `mailer.tenant_upkeep:${inboxD}`).execute();

    const writes = ses.writes().length;
    const dry = await svc(['inbox', 'mailer-tenant', 'sync', '--workspace', seed.workspaceId, '--inbox', inboxD, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stdout,
      new RegExp(
        `^${inboxD}\\tbilling\\twould create tenant svc-${inboxD}; would associate arn:aws:ses:us-east-1:${ACCOUNT}:configuration-set/svc-feedback-set; would associate arn:aws:ses:us-east-1:${ACCOUNT}:identity/shop.example$`,
        'm',
      ),
    );
    assert.equal(ses.writes().length, writes);
    assert.equal(tenantOf(inboxD), undefined);

    const real = await svc(['inbox', 'mailer-tenant', 'sync', '--workspace', seed.workspaceId]);
    assert.equal(real.code, 0, real.stderr);
    const lines = real.stdout.trim().split('\n');
    assert.equal(lines.length, 3, 'one line per inbox');
    assert.match(real.stdout, new RegExp(`^${inboxD}\\tbilling\\tcreate tenant svc-${inboxD}; associate .*; status ENABLED$`, 'm'));
    assert.match(real.stdout, new RegExp(`^${seed.inboxId}\\tsupport\\tup to date; status REINSTATED$`, 'm'));
    assert.ok(tenantOf(inboxD));
    assert.equal((await row(inboxD))!.last_error, null);
    const usage = await svc(['inbox', 'mailer-tenant', 'sync', '--all', '--workspace', seed.workspaceId]);
    assert.equal(usage.code, 2);
  });
});
