// Per-inbox Amazon SES tenants as channels are saved: a managed channel's save creates its inbox's
// tenant (suppression, tags, associations) and writes nothing at startup; mail through it names the
// tenant; the upkeep survives kill -9; another account's channel is left alone; PATCH, inbox and
// workspace deletion, and approving broadcasts keep the tenants in step.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { workspaceDataSteps } from '../../src/lifecycle/registry.js';
import { deleteInboxTenant } from '../../src/mailer-tenants/service.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type AwsFake, sesNotification } from '../helpers/aws.js';
import { addresses, createBroadcast, getBroadcast, postSns, rawHeader, schedule, TOPIC } from '../helpers/broadcasts.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail } from '../helpers/mail.js';
import { ACCOUNT, MANAGED_KEY, OTHER_KEY, SES_HOST, SMTP_PASSWORD, savedSignalJob, tenantsScene } from '../helpers/mailer-tenants.js';
import { startTestServer, type TestEnv, type TestServer } from '../helpers/server.js';
import type { SesFake } from '../helpers/ses-fake.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

describe('per-inbox Amazon SES tenants', () => {
  let te: TestEnv;
  let s: TestServer;
  let aws: AwsFake;
  let ses: SesFake;
  let sink: SmtpSink;
  let clock: ManualClock;
  let seed: Seed;
  let inboxC: string;
  const { svc, managedChannel, tenantOf, row } = tenantsScene((started) => ({ te, s, aws, ses, sink, clock, seed, inboxC } = started));

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
