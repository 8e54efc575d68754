// The hourly retention job: each rule deletes what it must and keeps what it must (files on disk
// included), runs at start, is idempotent, and logs one line per run with the counts by rule.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RetentionRule } from '../../src/lifecycle/registry.js';
import { retentionRules } from '../../src/lifecycle/registry.js';
import { runRetention } from '../../src/lifecycle/retention.js';
import { storeInboundMail } from '../../src/mail/ingest.js';
import { parseMail } from '../../src/mail/parse.js';
import { resolveRecipient } from '../../src/mail/recipients.js';
import { expiredSessionsRule, signInCodesRule, signInLinksRule } from '../../src/people/retention.js';
import { createSession } from '../../src/people/service.js';
import { DAY, HOUR, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { closeConnection, markConnection, touchConnection } from '../../src/realtime/connections.js';
import { emitMessage } from '../helpers/events.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverWithFile, mailWithFile, referencedKeys, storedKeys } from '../helpers/lifecycle.js';
import { INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhooks.js';

const retentionLines = (s: TestServer) => s.logs.filter((l) => l.msg === 'retention');

describe('retention', () => {
  let s: TestServer;
  let clock: ManualClock;
  let rx: Receiver;

  before(async () => {
    clock = new ManualClock('2031-03-01T00:00:00Z');
    rx = await startReceiver();
    s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    await s.app.jobs.stop();
  });
  after(async () => {
    await s.stop();
    await rx.close();
  });

  test('the job runs at start and logs one line per run with a count for every rule', async () => {
    await s.app.jobs.drain();
    const lines = retentionLines(s);
    assert.equal(lines.length, 1, 'the start run');
    assert.deepEqual(
      Object.keys(lines[0].deleted as object),
      retentionRules.map((r) => r.name),
    );
    // Counts, never redacted (a name like broadcast_recipients must not look like a recipient list).
    for (const [name, count] of Object.entries(lines[0].deleted as object)) assert.equal(typeof count, 'number', name);
    assert.equal(lines[0].more, false);
    // Not again until an hour has passed.
    clock.advance(59 * MINUTE);
    await s.app.jobs.drain();
    assert.equal(retentionLines(s).length, 1);
    clock.advance(MINUTE);
    await s.app.jobs.drain();
    assert.equal(retentionLines(s).length, 2);
  });

  test('closed conversations unchanged for retention_days go with messages, notes and files; the rest stays', async () => {
    const kept: Seed = await seedWorkspace(s.app); // no retention_days: keeps everything
    const ws: Seed = await seedWorkspace(s.app);
    const address = (await seedEmailChannel(s.app, ws)).address!;
    const keptAddress = (await seedEmailChannel(s.app, kept)).address!;
    assert.equal((await s.request('PATCH', '/v1/workspace', { token: ws.ownerToken, body: { retention_days: 30 } })).status, 200);

    // 55 old closed conversations (more than one batch), each with an attachment, a raw .eml and a note.
    const oldClosed: string[] = [];
    for (let i = 0; i < 55; i++) {
      const { conversation_id } = await deliverWithFile(s, address);
      await s.request('POST', `/v1/conversations/${conversation_id}/messages`, { token: ws.apiKey, body: { kind: 'note', body: 'internal' } });
      await s.request('PATCH', `/v1/conversations/${conversation_id}`, { token: ws.apiKey, body: { status: 'closed' } });
      oldClosed.push(conversation_id);
    }
    const oldOpen = (await deliverWithFile(s, address)).conversation_id;
    const keptClosed = (await deliverWithFile(s, keptAddress)).conversation_id;
    await s.request('PATCH', `/v1/conversations/${keptClosed}`, { token: kept.apiKey, body: { status: 'closed' } });
    const oldFiles = await referencedKeys(s.app.db, ws.workspaceId);
    assert.equal(oldFiles.length, 56 * 2);

    clock.advance(20 * DAY);
    // Closed 20 days after the others: unchanged for only 10 days at the check.
    const recentClosed = (await deliverWithFile(s, address)).conversation_id;
    await s.request('PATCH', `/v1/conversations/${recentClosed}`, { token: ws.apiKey, body: { status: 'closed' } });
    // Imported history with original times 3 years back, copied now: counts from the import.
    const target = (await resolveRecipient(s.app, address))!;
    const imported = await storeInboundMail(s.app, {
      target,
      mail: await parseMail(mailWithFile(address)),
      raw: mailWithFile(address),
      quiet: true,
      imported: true,
      receivedAt: new Date(clock.now().getTime() - 3 * 365 * DAY),
    });
    await s.app.db.updateTable('conversations').set({ status: 'closed' }).where('id', '=', imported.conversation_id).execute();

    clock.advance(10 * DAY + HOUR); // 30 days and an hour after the first batch
    const before = retentionLines(s).length;
    await s.app.jobs.drain();
    const lines = retentionLines(s).slice(before);
    assert.equal(lines.length, 1, 'one line per run');
    const deleted = lines[0].deleted as Record<string, number>;
    assert.equal(deleted.conversations, 55);
    assert.equal(deleted.raw_emails, 1, 'the old open conversation loses its .eml only');

    const left = await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', ws.workspaceId).execute();
    assert.deepEqual(new Set(left.map((r) => r.id)), new Set([oldOpen, recentClosed, imported.conversation_id]));
    for (const table of ['messages', 'attachments', 'mail_ids', 'conversation_labels'] as const) {
      const rows = await s.app.db.selectFrom(table).select('conversation_id').where('conversation_id', 'in', oldClosed).execute();
      assert.equal(rows.length, 0, `${table} of deleted conversations`);
    }
    // Files on disk: those of deleted conversations and the old .eml are gone, the rest are there.
    const onDisk = storedKeys(s.env.SVC_DATA_DIR);
    const referenced = await referencedKeys(s.app.db);
    for (const key of referenced) assert.ok(onDisk.has(key), `referenced file ${key} exists`);
    const stillReferenced = new Set(referenced);
    for (const key of oldFiles) if (!stillReferenced.has(key)) assert.ok(!onDisk.has(key), `${key} was deleted from storage`);

    // The old open conversation's message stays with its attachment; only the original is gone.
    const msgs = await s.request('GET', `/v1/conversations/${oldOpen}/messages`, { token: ws.apiKey });
    assert.equal(msgs.status, 200);
    assert.equal(msgs.body.data.length, 1);
    assert.equal(msgs.body.data[0].attachments.length, 1);
    const raw = await s.request('GET', `/v1/conversations/${oldOpen}/messages/${msgs.body.data[0].id}/raw`, { token: ws.apiKey });
    assert.equal(raw.status, 404);
    const recentMsg = (await s.request('GET', `/v1/conversations/${recentClosed}/messages`, { token: ws.apiKey })).body.data.find(
      (m: { kind: string }) => m.kind === 'message',
    );
    assert.equal((await s.request('GET', `/v1/conversations/${recentClosed}/messages/${recentMsg.id}/raw`, { token: ws.apiKey })).status, 200);

    // Without retention_days nothing goes.
    const keptRows = await s.app.db.selectFrom('messages').select('raw_storage_key').where('conversation_id', '=', keptClosed).execute();
    assert.ok(keptRows[0].raw_storage_key);

    // Idempotent: the next run finds nothing more.
    clock.advance(HOUR);
    await s.app.jobs.drain();
    const again = retentionLines(s).at(-1)!.deleted as Record<string, number>;
    assert.equal(again.conversations, 0);
    assert.equal(again.raw_emails, 0);

    // The imported conversation goes 30 days after its import; the reopened-then-closed one then too.
    clock.advance(30 * DAY);
    await s.app.jobs.drain();
    const rest = await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', ws.workspaceId).execute();
    assert.deepEqual(
      rest.map((r) => r.id),
      [oldOpen],
    );
  });

  test('finished webhook deliveries go after 7 days, except the newest 100 per endpoint', async () => {
    const ws = await seedWorkspace(s.app);
    const hook = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/retention`, events: ['message.created'] } });
    assert.equal(hook.status, 201);
    for (let i = 0; i < 130; i++) await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await s.app.jobs.drain();
    const count = async () =>
      Number(
        (
          await s.app.db
            .selectFrom('webhook_deliveries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('endpoint_id', '=', hook.body.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await count(), 130);
    clock.advance(6 * DAY);
    await s.app.jobs.drain();
    assert.equal(await count(), 130, 'six days: all kept');
    // A delivery that finished recently.
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await s.app.jobs.drain();
    clock.advance(DAY + HOUR);
    await s.app.jobs.drain();
    assert.equal(await count(), 100, 'the newest 100 (the recent one and 99 old ones)');
    const attempts = await s.app.db.selectFrom('webhook_attempts').select('event_seq').where('endpoint_id', '=', hook.body.id).execute();
    assert.equal(attempts.length, 100, 'attempts go with their deliveries');
    const log = await s.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`, { token: ws.apiKey });
    assert.equal(log.body.data.length, 100);
  });

  test('stale realtime connection records go after an hour; live ones stay', async () => {
    const ws = await seedWorkspace(s.app);
    const closed = await markConnection(s.app, { workspaceId: ws.workspaceId, kind: 'contact', subjectId: 'ct_a' });
    const silent = await markConnection(s.app, { workspaceId: ws.workspaceId, kind: 'contact', subjectId: 'ct_b' });
    const live = await markConnection(s.app, { workspaceId: ws.workspaceId, kind: 'member', subjectId: ws.ownerId });
    await closeConnection(s.app, closed.id);
    clock.advance(50 * MINUTE);
    await touchConnection(s.app, live.id);
    clock.advance(15 * MINUTE);
    await s.app.jobs.drain();
    const ids = (await s.app.db.selectFrom('realtime_connections').select('id').where('workspace_id', '=', ws.workspaceId).execute()).map((r) => r.id);
    assert.deepEqual(ids, [live.id]);
    assert.ok(!ids.includes(silent.id));
  });

  test('expired sessions and day-old sign-in codes go', async () => {
    const ws = await seedWorkspace(s.app);
    const { token } = await createSession(s.app, ws.ownerId);
    await s.app.db
      .insertInto('sign_in_codes')
      .values({
        id: 'code_old',
        email: 'x@example.com',
        code_hash: 'h',
        created_at: clock.now().toISOString(),
        expires_at: new Date(clock.now().getTime() + 10 * MINUTE).toISOString(),
        used_at: null,
      })
      .execute();
    clock.advance(31 * DAY);
    await s.app.jobs.drain();
    assert.equal((await s.request('GET', '/v1/me', { token })).status, 401);
    const sessions = await s.app.db.selectFrom('sessions').select('id').where('person_id', '=', ws.ownerId).execute();
    assert.equal(sessions.length, 0);
    assert.equal(await s.app.db.selectFrom('sign_in_codes').select('id').where('id', '=', 'code_old').executeTakeFirst(), undefined);
  });

  test('sign-in codes and links stay for a day after they were made, then go', async () => {
    const ws = await seedWorkspace(s.app);
    const made = clock.now();
    const later = (ms: number) => new Date(made.getTime() + ms).toISOString();
    await s.app.db
      .insertInto('sign_in_codes')
      .values({ id: 'code_day', email: 'y@example.com', code_hash: 'h', created_at: made.toISOString(), expires_at: later(10 * MINUTE), used_at: null })
      .execute();
    await s.app.db
      .insertInto('sign_in_links')
      .values({ id: 'link_day', person_id: ws.ownerId, token_hash: 'h', created_at: made.toISOString(), expires_at: later(15 * MINUTE), used_at: null })
      .execute();
    const rules = [signInCodesRule, signInLinksRule];
    const left = async () => ({
      code: (await s.app.db.selectFrom('sign_in_codes').select('id').where('id', '=', 'code_day').execute()).length,
      link: (await s.app.db.selectFrom('sign_in_links').select('id').where('id', '=', 'link_day').execute()).length,
    });
    clock.advance(DAY - MINUTE);
    await runRetention(s.app, rules);
    assert.deepEqual(await left(), { code: 1, link: 1 }, 'expired, but the hourly request limit still counts them');
    clock.advance(2 * MINUTE);
    await runRetention(s.app, rules);
    assert.deepEqual(await left(), { code: 0, link: 0 });
  });

  test('expired sessions: a run with none expired leaves the credentials epoch alone; a short batch is the last one asked', async () => {
    const credentialsEpoch = async () =>
      Number((await s.app.db.selectFrom('credentials_epoch').select('epoch').where('id', '=', 1).executeTakeFirstOrThrow()).epoch);
    let calls = 0;
    const counted: RetentionRule = { ...expiredSessionsRule, deleteBatch: (...a) => (calls++, expiredSessionsRule.deleteBatch(...a)) };
    const ws = await seedWorkspace(s.app);
    await runRetention(s.app, [counted]);
    let epoch = await credentialsEpoch();
    calls = 0;
    const idle = await runRetention(s.app, [counted]);
    assert.deepEqual(idle.deleted, { sessions: 0 });
    assert.equal(await credentialsEpoch(), epoch, 'nothing expired, nothing changed: every process keeps its cached credentials');
    assert.equal(calls, 1);

    await createSession(s.app, ws.ownerId);
    await createSession(s.app, ws.ownerId);
    clock.advance(31 * DAY);
    epoch = await credentialsEpoch();
    calls = 0;
    const report = await runRetention(s.app, [counted]);
    assert.ok(report.deleted.sessions >= 3, JSON.stringify(report.deleted));
    assert.ok((await credentialsEpoch()) > epoch, 'deleted sessions move the epoch');
    assert.equal(calls, 1, 'fewer than a batch deleted: nothing is left to ask for');
  });

  // A rule that deletes one row per batch, `rows` times, counting its calls.
  const countingRule = (name: string, rows: number) => {
    const rule = {
      name,
      calls: 0,
      async deleteBatch() {
        rule.calls++;
        return rule.calls <= rows ? 1 : 0;
      },
    };
    return rule satisfies RetentionRule;
  };

  test('a run stops at its time budget, counts what it did, leaves later rules for the next run and says there is more', async () => {
    const first = countingRule('first', 3);
    const second = countingRule('second', 3);
    const report = await runRetention(s.app, [first, second], 0);
    assert.deepEqual(report.deleted, { first: 1, second: 0 });
    assert.equal(report.more, true);
    assert.equal(second.calls, 0, 'no rule runs once the budget is spent');
  });

  test('within its budget a run goes through every rule until each has nothing left, and wakes the file jobs', async () => {
    const first = countingRule('first', 3);
    const second = countingRule('second', 2);
    let woken = 0;
    const wake = s.app.jobs.wake;
    s.app.jobs.wake = () => {
      woken++;
      wake.call(s.app.jobs);
    };
    const before = performance.now();
    // A budget as large as the clock's own reading: real elapsed time never reaches it; a sum of the two readings would.
    const report = await runRetention(s.app, [first, second], performance.now()).finally(() => {
      s.app.jobs.wake = wake;
    });
    const wall = performance.now() - before;
    assert.deepEqual(report.deleted, { first: 3, second: 2 });
    assert.equal(report.more, false);
    assert.deepEqual([first.calls, second.calls], [4, 3]);
    assert.equal(woken, 1, 'deleted rows leave files behind: their jobs run now');
    const line = retentionLines(s).at(-1)!;
    assert.ok(
      typeof line.duration_ms === 'number' && line.duration_ms >= 0 && line.duration_ms <= Math.ceil(wall),
      `duration_ms ${line.duration_ms} within ${wall}`,
    );
  });
});

// retention_days is a boundary in time: one second before it nothing goes, at it nothing is "older
// than" yet, one second after it the closed conversation, the imported one (counted from the import)
// and the raw .eml go. An off-by-one day (or hour) in the cutoff fails here.
describe('retention boundaries', () => {
  let s: TestServer;
  let clock: ManualClock;

  before(async () => {
    clock = new ManualClock('2031-06-01T12:00:00Z');
    s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
  });
  after(() => s.stop());

  test('a closed conversation, an imported one and a raw .eml just before, at and just after retention_days', async () => {
    const ws = await seedWorkspace(s.app);
    const address = (await seedEmailChannel(s.app, ws)).address!;
    assert.equal((await s.request('PATCH', '/v1/workspace', { token: ws.ownerToken, body: { retention_days: 30 } })).status, 200);
    const start = clock.now().getTime();

    const closed = (await deliverWithFile(s, address)).conversation_id;
    assert.equal((await s.request('PATCH', `/v1/conversations/${closed}`, { token: ws.apiKey, body: { status: 'closed' } })).status, 200);
    const open = await deliverWithFile(s, address);
    // Imported history keeps its original times (two years back); retention counts from the import.
    const target = (await resolveRecipient(s.app, address))!;
    const imported = await storeInboundMail(s.app, {
      target,
      mail: await parseMail(mailWithFile(address)),
      raw: mailWithFile(address),
      quiet: true,
      imported: true,
      receivedAt: new Date(start - 2 * 365 * DAY),
    });
    await s.app.db.updateTable('conversations').set({ status: 'closed' }).where('id', '=', imported.conversation_id).execute();

    const conversations = async () =>
      new Set((await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', ws.workspaceId).execute()).map((r) => r.id));
    const openRaw = async () =>
      (await s.app.db.selectFrom('messages').select('raw_storage_key').where('id', '=', open.message_id).executeTakeFirstOrThrow()).raw_storage_key;
    const runAt = async (ms: number) => {
      clock.set(new Date(start + ms));
      return (await runRetention(s.app)).deleted;
    };

    for (const [label, at] of [
      ['a day before', 29 * DAY],
      ['a second before', 30 * DAY - 1000],
      ['exactly at', 30 * DAY],
    ] as const) {
      const deleted = await runAt(at);
      assert.equal(deleted.conversations, 0, `${label} retention_days: no conversation goes`);
      assert.equal(deleted.raw_emails, 0, `${label} retention_days: no .eml goes`);
      assert.deepEqual(await conversations(), new Set([closed, open.conversation_id, imported.conversation_id]));
      assert.ok(await openRaw(), `${label} retention_days: the open conversation keeps its .eml`);
    }

    const deleted = await runAt(30 * DAY + 1000);
    assert.equal(deleted.conversations, 2, 'a second after: the closed conversation and the imported one go');
    assert.equal(deleted.raw_emails, 1, "a second after: the open conversation's .eml goes");
    assert.deepEqual(await conversations(), new Set([open.conversation_id]));
    assert.equal(await openRaw(), null);
    const messages = await s.request('GET', `/v1/conversations/${open.conversation_id}/messages`, { token: ws.apiKey });
    assert.equal(messages.body.data.length, 1, 'the message itself stays');
  });
});
