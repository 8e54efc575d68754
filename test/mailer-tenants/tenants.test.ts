import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createInbox } from '../../src/inboxes/service.js';
import { workspaceDataSteps } from '../../src/lifecycle/registry.js';
import { deleteInboxTenant } from '../../src/mailer-tenants/service.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type AwsFake, sesNotification, startAwsFake } from '../helpers/aws.js';
import { addresses, createBroadcast, getBroadcast, postSns, rawHeader, schedule, TOPIC } from '../helpers/broadcasts.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET } from '../helpers/mail.js';
import { runSvc, startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';
import { installSesFake, type SesFake } from '../helpers/ses-fake.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const ACCOUNT = '111111111111';
const SERVER_KEY = 'AKIASERVERKEY0000001';
const MANAGED_KEY = 'AKIAMANAGEDSMTP00001';
const OTHER_KEY = 'AKIAOTHERACCOUNT0001';
const SMTP_PASSWORD = 'ses-smtp-password';
const SES_HOST = 'email-smtp.us-east-1.amazonaws.com';

/** The `mailer.channel_saved` job a channel save stores in its own transaction (src/mailer-tenants/reaction.ts). */
async function savedSignalJob(db: TestServer['app']['db'], channelId: string) {
  const rows = await db.selectFrom('jobs').select(['payload']).where('kind', '=', 'mailer.channel_saved').execute();
  return rows
    .map((r) => JSON.parse(r.payload) as { channelId: string; former?: { inboxId: string; smtpHost: string | null } })
    .find((p) => p.channelId === channelId);
}

describe('tenant settings', () => {
  test('SVC_MAILER_* are all four or none; the tenant prefix makes valid tenant names', () => {
    const four = {
      SVC_MAILER_REGION: 'us-east-1',
      SVC_MAILER_ACCESS_KEY_ID: SERVER_KEY,
      SVC_MAILER_SECRET_ACCESS_KEY: 'x',
      SVC_MAILER_CONFIGURATION_SET: 'set',
    };
    assert.equal(loadConfig({}).mailer, undefined);
    assert.equal(loadConfig(four).mailer?.tenantPrefix, 'svc-');
    for (const missing of Object.keys(four)) {
      const env: Record<string, string> = { ...four };
      delete env[missing];
      assert.throws(
        () => loadConfig(env),
        (e: Error) => e instanceof ConfigError && /all four or none/.test(e.message),
      );
    }
    assert.throws(() => loadConfig({ ...four, SVC_MAILER_TENANT_PREFIX: 'bad prefix!' }), /SVC_MAILER_TENANT_PREFIX/);
    assert.equal(loadConfig({ ...four, SVC_MAILER_TENANT_PREFIX: 'acme_' }).mailer?.tenantPrefix, 'acme_');
  });
});

describe('per-inbox Amazon SES tenants', () => {
  let te: TestEnv;
  let s: TestServer;
  let aws: AwsFake;
  let ses: SesFake;
  let sink: SmtpSink;
  let operator: SmtpSink;
  let clock: ManualClock;
  let seed: Seed;
  let inboxC: string;
  const svc = (args: string[]) => runSvc(args, { env: s.env });
  let sesIds = 0;

  before(async () => {
    aws = await startAwsFake();
    ses = installSesFake(aws, {
      account: ACCOUNT,
      serverKey: SERVER_KEY,
      keyAccounts: { [MANAGED_KEY]: ACCOUNT, [OTHER_KEY]: '222222222222' },
      identities: [{ IdentityName: 'shop.example', IdentityType: 'DOMAIN' }],
    });
    sink = await startSmtpSink({
      username: MANAGED_KEY,
      password: SMTP_PASSWORD,
      answer: () => `Ok 0100018f00000000-${String(++sesIds).padStart(8, '0')}-0000-0000-0000-000000000000-000000`,
    });
    operator = await startSmtpSink();
    te = await testEnv({
      SVC_MAILER_REGION: 'us-east-1',
      SVC_MAILER_ACCESS_KEY_ID: SERVER_KEY,
      SVC_MAILER_SECRET_ACCESS_KEY: 'server-secret-key-do-not-leak',
      SVC_MAILER_CONFIGURATION_SET: 'svc-feedback-set',
      SVC_MAILER_ENDPOINT: aws.url,
      SVC_MAILER_TOPIC_ARNS: TOPIC,
      SVC_INGRESS_SECRET: INGRESS_SECRET,
      SVC_OPERATOR_EMAIL: 'operator@ops.example',
      SVC_SMTP_HOST: '127.0.0.1',
      SVC_SMTP_PORT: String(operator.port),
      SVC_SMTP_TLS: 'none',
    });
    s = await startTestServer({ testEnv: te });
    clock = s.clock as ManualClock;
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    inboxC = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' })).id;
  });
  after(async () => {
    await s.stop();
    await te.cleanup();
    await aws.close();
    await sink.close();
    await operator.close();
  });

  async function managedChannel(inboxId: string, address: string, username = MANAGED_KEY) {
    const r = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: {
        kind: 'email',
        inbox_id: inboxId,
        name: 'News',
        address,
        smtp_host: SES_HOST,
        smtp_port: sink.port,
        tls: 'none',
        smtp_username: username,
        smtp_password: SMTP_PASSWORD,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.ok(await savedSignalJob(s.app.db, r.body.id), 'the upkeep is stored with the channel');
    await s.app.jobs.drain();
    return r.body.id as string;
  }
  const tenantOf = (inboxId: string) => ses.tenants.get(`svc-${inboxId}`);
  const row = (inboxId: string) => s.app.db.selectFrom('mailer_tenants').selectAll().where('inbox_id', '=', inboxId).executeTakeFirst();

  test('saving a managed channel creates the inbox’s tenant with suppression, tags and associations; nothing is written at startup', async () => {
    assert.deepEqual(ses.writes(), [], 'no provider writes at startup');
    await managedChannel(seed.inboxId, 'news@shop.example');
    const t = tenantOf(seed.inboxId)!;
    assert.ok(t, 'tenant created');
    assert.deepEqual(t.suppression, { SuppressedReasons: ['BOUNCE', 'COMPLAINT'], SuppressionScope: 'TENANT' });
    assert.deepEqual(t.tags.map((x) => `${x.Key}=${x.Value}`).sort(), [`svc:inbox=${seed.inboxId}`, `svc:workspace=${seed.workspaceId}`]);
    assert.deepEqual([...t.resources].sort(), [
      `arn:aws:ses:us-east-1:${ACCOUNT}:configuration-set/svc-feedback-set`,
      `arn:aws:ses:us-east-1:${ACCOUNT}:identity/shop.example`,
    ]);
    const stored = (await row(seed.inboxId))!;
    assert.equal(stored.state, 'ready');
    assert.equal(stored.sending_status, 'ENABLED');
    assert.equal(stored.tenant_arn, t.arn);
    // Saving again changes nothing at the provider (every call is idempotent).
    const writes = ses.writes().length;
    await managedChannel(seed.inboxId, 'offers@shop.example');
    assert.equal(ses.writes().length, writes);
    await managedChannel(inboxC, 'sales@shop.example');
    assert.ok(tenantOf(inboxC));
    // The account checks are cached: one GetCallerIdentity, one GetAccessKeyInfo for the one key.
    assert.equal(ses.calls.filter((c) => c === 'GetCallerIdentity').length, 1);
    assert.equal(ses.calls.filter((c) => c === 'GetAccessKeyInfo').length, 1);

    // A restart writes nothing: the status read is the only call.
    const before = ses.writes().length;
    const again = await startTestServer({ testEnv: te });
    await again.app.jobs.stop();
    await again.app.jobs.drain();
    (again.clock as ManualClock).advance(5 * MINUTE);
    await again.app.jobs.drain();
    await again.stop();
    // Both servers share the jobs table: this clock catches up with the other one's.
    clock.set(Math.max(clock.now().getTime(), again.clock.now().getTime()));
    assert.equal(ses.writes().length, before);
    assert.ok(ses.calls.includes('ListReputationEntities'));
    assert.ok(!s.rawLogs.join('').includes('server-secret-key-do-not-leak'));
  });

  test('every mail through a managed channel names the tenant and configuration set; SES bounces match by message id', async () => {
    const b = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(3, 'hdr'), {
      channel_id: (await s.app.db.selectFrom('channels').select('id').where('address', '=', 'news@shop.example').executeTakeFirstOrThrow()).id,
    });
    const count = sink.messages.length;
    assert.equal((await schedule(s, seed.apiKey, b.id)).status, 200);
    await s.app.jobs.drain();
    const mails = (await sink.waitFor(count + 3)).slice(count);
    for (const m of mails) {
      assert.equal(rawHeader(m, 'x-ses-tenant'), `svc-${seed.inboxId}`);
      assert.equal(rawHeader(m, 'x-ses-configuration-set'), 'svc-feedback-set');
      assert.equal(m.from, 'news@shop.example', 'no VERP return path through SES');
    }
    // A bounce notification that names only SES's message id (from the SMTP answer).
    const stored = await s.app.db
      .selectFrom('broadcast_recipients')
      .select(['email', 'provider_message_id'])
      .where('broadcast_id', '=', b.id)
      .orderBy('seq')
      .execute();
    assert.ok(stored.every((r) => /^0100018f/.test(r.provider_message_id ?? '')));
    const bounce = sesNotification('Bounce', { recipient: stored[0].email, messageId: stored[0].provider_message_id! });
    assert.equal((await postSns(s, aws.sns.notification(TOPIC, bounce))).body.result, 'bounce');
    assert.equal((await getBroadcast(s, seed.apiKey, b.id)).counts.bounced, 1);

    // A support reply through the managed channel carries the headers too.
    const inbound = await deliverMail(s, 'news@shop.example', { Subject: 'Question' });
    const reply = await s.request('POST', `/v1/conversations/${inbound.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'Answer.' } });
    assert.equal(reply.status, 201);
    const before = sink.messages.length;
    await s.app.jobs.drain();
    const sent = (await sink.waitFor(before + 1))[before];
    assert.equal(rawHeader(sent, 'x-ses-tenant'), `svc-${seed.inboxId}`);
  });

  test('kill -9 right after a channel is saved loses nothing: its upkeep was stored in the same transaction', async () => {
    const own = await seedWorkspace(s.app);
    const inboxK = own.inboxId;
    // A separate process saves the channel and is killed at once after the commit, before any upkeep could run.
    const script = `
      import { loadConfig } from ${JSON.stringify(new URL('../../src/config.js', import.meta.url).href)};
      import { buildServices } from ${JSON.stringify(new URL('../../src/context.js', import.meta.url).href)};
      import { createEmailChannel } from ${JSON.stringify(new URL('../../src/channels/service.js', import.meta.url).href)};
      const app = buildServices(loadConfig(process.env));
      const ch = await createEmailChannel(app, { workspaceId: ${JSON.stringify(own.workspaceId)}, inboxId: ${JSON.stringify(inboxK)}, name: 'K', address: 'killed@shop.example',
        smtpHost: ${JSON.stringify(SES_HOST)}, smtpPort: ${sink.port}, tls: 'none', smtpUsername: ${JSON.stringify(MANAGED_KEY)}, smtpPassword: 'x' });
      process.stdout.write(ch.id);
      process.kill(process.pid, 'SIGKILL');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '', ...s.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const [, signal] = await once(child, 'close');
    assert.equal(signal, 'SIGKILL', err);
    assert.match(out, /^ch_/, err);
    assert.ok(await savedSignalJob(s.app.db, out), 'the upkeep job survived the kill');
    assert.equal(tenantOf(inboxK), undefined);
    await s.app.jobs.drain();
    assert.ok(tenantOf(inboxK), 'the server did the upkeep after the crash');
  });

  test('a channel of another account is left alone', async () => {
    const other = await seedWorkspace(s.app);
    const r = await s.request('POST', '/v1/channels', {
      token: other.apiKey,
      body: {
        kind: 'email',
        inbox_id: other.inboxId,
        name: 'Other',
        address: 'mail@other.example',
        smtp_host: SES_HOST,
        smtp_port: sink.port,
        tls: 'none',
        smtp_username: OTHER_KEY,
        smtp_password: SMTP_PASSWORD,
      },
    });
    assert.equal(r.status, 201);
    assert.ok(await savedSignalJob(s.app.db, r.body.id), 'the upkeep is stored with the channel');
    const writes = ses.writes().length;
    await s.app.jobs.drain();
    assert.equal(ses.writes().length, writes);
    assert.equal(tenantOf(other.inboxId), undefined);
    const check = await s.app.db.selectFrom('mailer_channels').selectAll().where('channel_id', '=', r.body.id).executeTakeFirstOrThrow();
    assert.equal(check.managed, 0);
    assert.match(check.reason, /another account \(222222222222\)/);
    // A channel on another SMTP host makes no provider call at all.
    const calls = ses.calls.length;
    await s.request('POST', '/v1/channels', {
      token: other.apiKey,
      body: {
        kind: 'email',
        inbox_id: other.inboxId,
        name: 'Own',
        address: 'own@other.example',
        smtp_host: 'smtp.other.example',
        smtp_username: 'me',
        smtp_password: 'x',
      },
    });
    await s.app.jobs.drain();
    assert.equal(ses.calls.length, calls);
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

  test('PATCH of a channel runs the tenant upkeep as creating one does; DELETE of its inbox deletes the tenant', async () => {
    const inboxE = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Events' })).id;
    const created = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: {
        kind: 'email',
        inbox_id: inboxE,
        name: 'Events',
        address: 'events@shop.example',
        smtp_host: '127.0.0.1',
        smtp_port: sink.port,
        tls: 'none',
        smtp_username: MANAGED_KEY,
        smtp_password: SMTP_PASSWORD,
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await s.app.jobs.drain();
    assert.equal(tenantOf(inboxE), undefined, 'another SMTP host: not managed');
    const patched = await s.request('PATCH', `/v1/channels/${created.body.id}`, { token: seed.ownerToken, body: { smtp_host: SES_HOST } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(
      (await savedSignalJob(s.app.db, created.body.id))?.former,
      { inboxId: inboxE, smtpHost: '127.0.0.1' },
      'the upkeep is stored with the change, with where it sent from',
    );
    await s.app.jobs.drain();
    assert.ok(tenantOf(inboxE), 'the tenant is created after the PATCH');
    assert.equal(
      (await s.app.db.selectFrom('mailer_channels').select('managed').where('channel_id', '=', created.body.id).executeTakeFirstOrThrow()).managed,
      1,
    );

    const del = await s.request('DELETE', `/v1/inboxes/${inboxE}`, { token: seed.ownerToken });
    assert.equal(del.status, 202, JSON.stringify(del.body));
    await s.app.jobs.drain();
    assert.equal(tenantOf(inboxE), undefined, 'deleted at the provider');
    assert.equal(await row(inboxE), undefined);
    assert.ok(ses.calls.includes('DeleteTenant'));
  });

  test('approving broadcasts keeps the tenants; deleting an inbox or the workspace deletes them at the provider', async () => {
    ses.tenants.delete(`svc-${inboxC}`);
    const approved = await svc(['workspace', 'broadcasts', 'approve', '--workspace', seed.workspaceId]);
    assert.equal(approved.code, 0, approved.stderr);
    await s.app.jobs.drain();
    assert.ok(tenantOf(inboxC), 'recreated on approve');

    assert.equal(await deleteInboxTenant(s.app, inboxC), true);
    assert.equal(tenantOf(inboxC), undefined);
    assert.equal(await row(inboxC), undefined);

    const step = workspaceDataSteps.find((x) => x.name === 'mailer_tenants')!;
    assert.ok(tenantOf(seed.inboxId));
    while ((await step.deleteBatch(s.app, seed.workspaceId, 100)).rows > 0);
    assert.equal(tenantOf(seed.inboxId), undefined);
    assert.equal((await s.app.db.selectFrom('mailer_tenants').select('inbox_id').where('workspace_id', '=', seed.workspaceId).execute()).length, 0);
  });
});

describe('turning SES tenants on writes nothing at startup', () => {
  test('a channel saved while SVC_MAILER_* was unset, its reaction still queued at the stop, is not acted on when the feature is turned on; a later save is', async () => {
    const aws = await startAwsFake();
    const ses = installSesFake(aws, {
      account: ACCOUNT,
      serverKey: SERVER_KEY,
      keyAccounts: { [MANAGED_KEY]: ACCOUNT },
      identities: [{ IdentityName: 'shop.example', IdentityType: 'DOMAIN' }],
    });
    const te = await testEnv();
    const mailerOn = {
      SVC_MAILER_REGION: 'us-east-1',
      SVC_MAILER_ACCESS_KEY_ID: SERVER_KEY,
      SVC_MAILER_SECRET_ACCESS_KEY: 'server-secret-key',
      SVC_MAILER_CONFIGURATION_SET: 'svc-feedback-set',
      SVC_MAILER_ENDPOINT: aws.url,
    };
    try {
      // Feature off: the save stores its reaction; the server stops before running it (the race).
      const off = await startTestServer({ testEnv: te, clock: new ManualClock('2026-03-01T10:00:00Z') });
      await off.app.jobs.stop();
      const seed = await seedWorkspace(off.app);
      const saved = await off.request('POST', '/v1/channels', {
        token: seed.apiKey,
        body: {
          kind: 'email',
          inbox_id: seed.inboxId,
          name: 'News',
          address: 'news@shop.example',
          smtp_host: SES_HOST,
          smtp_port: 2587,
          tls: 'none',
          smtp_username: MANAGED_KEY,
          smtp_password: SMTP_PASSWORD,
        },
      });
      assert.equal(saved.status, 201, JSON.stringify(saved.body));
      assert.ok(await savedSignalJob(off.app.db, saved.body.id), 'the reaction is queued');
      await off.stop();

      // Feature on: every job due runs, and still nothing is written to the provider.
      const on = await startTestServer({ testEnv: te, env: mailerOn, clock: new ManualClock('2026-03-01T11:00:00Z') });
      try {
        await on.app.jobs.drain();
        assert.equal(await savedSignalJob(on.app.db, saved.body.id), undefined, 'the queued reaction is done');
        assert.deepEqual(ses.writes(), [], 'no provider write at startup');
        assert.equal(ses.tenants.size, 0);
        // The operator's back-fill still sees the channel.
        const dry = await runSvc(['inbox', 'mailer-tenant', 'sync', '--workspace', seed.workspaceId, '--dry-run'], { env: { ...on.env, ...mailerOn } });
        assert.equal(dry.code, 0, dry.stderr);
        assert.match(dry.stdout, new RegExp(`^${seed.inboxId}\\t\\S+\\twould create tenant svc-${seed.inboxId}`, 'm'));
        // A save now (the feature on) acts.
        (on.clock as ManualClock).advance(MINUTE);
        const changed = await on.request('PATCH', `/v1/channels/${saved.body.id}`, { token: seed.apiKey, body: { name: 'Newsletter' } });
        assert.equal(changed.status, 200, JSON.stringify(changed.body));
        await on.app.jobs.drain();
        assert.ok(ses.tenants.get(`svc-${seed.inboxId}`), 'the save created the tenant');
      } finally {
        await on.stop();
      }
    } finally {
      await te.cleanup();
      await aws.close();
    }
  });
});
