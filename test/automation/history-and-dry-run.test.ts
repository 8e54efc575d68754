// Automation safety (issue 36): quiet history — a migration imports mail into an inbox where rules
// would match everything, and nothing acts; the dry run changes nothing and says exactly what a
// later real run on the same data does.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DAY } from '../../src/platform/clock.js';
import { mbox, uploadExport } from '../helpers/export-files.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { expectState } from '../helpers/migration.js';
import { disableAll, type World, world } from './setup.js';

describe('automation: quiet history and the dry run', () => {
  let w: World;
  let channelId: string;
  before(async () => {
    w = await world();
    channelId = (await w.s.app.db.selectFrom('channels').select('id').where('inbox_id', '=', w.seed.inboxId).executeTakeFirstOrThrow()).id;
  });
  after(() => w?.stop());

  const everything = [
    { type: 'add_label', label: 'touched' },
    { type: 'set_priority', priority: 'urgent' },
    { type: 'add_note', text: 'touched' },
  ];

  test('a migration with match-everything rules on every trigger: zero actions on imported mail', async () => {
    for (const trigger of [
      { type: 'conversation_created' },
      { type: 'customer_message' },
      { type: 'team_message' },
      { type: 'conversation_updated' },
      { type: 'pending_for', hours: 1 },
      { type: 'open_unassigned_for', minutes: 1 },
      { type: 'no_customer_answer_for', days: 1 },
    ])
      await w.rule({ name: `all ${trigger.type}`, trigger, actions: everything });
    const now = w.clock.now();
    const mails = [];
    for (let n = 1; n <= 3; n++)
      mails.push(
        await buildMail({
          from: `Customer ${n} <c${n}@customer.test>`,
          to: w.address,
          subject: `Old question ${n}`,
          messageId: `old${n}-${crypto.randomBytes(4).toString('hex')}@customer.test`,
          date: daysAgo(now, n),
          text: `Old body ${n}.`,
        }),
      );
    const created = await w.api('POST', '/v1/migrations', { provider: 'export_file', inbox_id: w.seed.inboxId, channel_id: channelId });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    const r = await uploadExport(w.s.url, w.seed.apiKey, id, mbox(mails), { settle: () => w.drain() });
    assert.equal(r.upload.state, 'read', JSON.stringify(r.upload));
    await w.api('POST', `/v1/migrations/${id}/scan`);
    await w.drain();
    await expectState(w.s, w.seed.apiKey, id, 'ready');
    await w.api('POST', `/v1/migrations/${id}/start`);
    await w.drain();
    await expectState(w.s, w.seed.apiKey, id, 'syncing');
    w.clock.advance(3 * DAY);
    await w.drain();
    const imported = await w.s.app.db
      .selectFrom('conversations')
      .selectAll()
      .where('workspace_id', '=', w.seed.workspaceId)
      .where('imported', '=', 1)
      .execute();
    assert.equal(imported.length, 3);
    for (const c of imported) {
      const shown = await w.conversation(c.id);
      assert.deepEqual(shown.labels, []);
      assert.equal(shown.priority, null);
    }
    assert.equal((await w.s.app.db.selectFrom('automation_runs').select('id').execute()).length, 0, 'no rule ran at all');
    assert.equal((await w.s.app.db.selectFrom('jobs').select('id').where('kind', 'like', 'automation.%').execute()).length, 0);
    const notes = await w.s.app.db
      .selectFrom('messages')
      .select('id')
      .where(
        'conversation_id',
        'in',
        imported.map((c) => c.id),
      )
      .where('kind', '=', 'note')
      .execute();
    assert.equal(notes.length, 0);
    await disableAll(w);
  });

  test('the dry run changes nothing and equals a later real run on the same data', async () => {
    const rule = await w.rule({
      name: 'billing',
      enabled: false,
      trigger: { type: 'conversation_updated' },
      conditions: {
        match: 'any',
        items: [
          { field: 'subject', operator: 'contains', value: 'invoice' },
          { field: 'body', operator: 'matches', value: 'refund|chargeback' },
        ],
      },
      actions: [
        { type: 'add_label', label: 'billing' },
        { type: 'set_status', status: 'pending' },
        { type: 'add_label', label: 'vip' },
      ],
    });
    const ids: string[] = [];
    const subjects = ['Invoice 12', 'Where is my parcel', 'Question', 'INVOICE copy', 'Hello'];
    const bodies = ['Hi', 'Hi', 'I want a refund', 'Hi', 'chargeback coming'];
    for (const [i, subject] of subjects.entries()) ids.push((await w.mail({ Subject: subject }, `${bodies[i]}\r\n`)).conversation_id);
    await w.drain();
    // One already labelled vip: that action would do nothing there.
    await w.api('PATCH', `/v1/conversations/${ids[0]}`, { labels: ['vip'] });
    await w.drain();
    const snapshot = async () => Promise.all(ids.map((id) => w.conversation(id)));
    const before = await snapshot();
    const dry = await w.api('POST', `/v1/automation/rules/${rule.id}/dry-run`, { days: 7, limit_examples: 10 });
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.deepEqual(await snapshot(), before, 'nothing changed');
    assert.equal((await w.runs(`&rule_id=${rule.id}`)).length, 0);
    assert.ok(dry.body.evaluated >= ids.length);
    assert.equal(dry.body.matched, 4);
    assert.deepEqual(dry.body.summary, [
      { action: { type: 'add_label', label: 'billing' }, count: 4 },
      { action: { type: 'set_status', status: 'pending' }, count: 4 },
      { action: { type: 'add_label', label: 'vip' }, count: 3 },
    ]);
    // Conversations of more than `days` ago are not looked at.
    const narrow = await w.api('POST', `/v1/automation/rules/${rule.id}/dry-run`, {});
    assert.equal(narrow.body.matched, 4);

    await w.api('PATCH', `/v1/automation/rules/${rule.id}`, { enabled: true });
    for (const id of ids) await w.api('PATCH', `/v1/conversations/${id}`, { priority: 'low' });
    await w.drain();
    const runs = (await w.runs(`&rule_id=${rule.id}`)).filter((r) => r.outcome === 'acted');
    const real = new Map(runs.map((r) => [r.conversation_id, r.actions]));
    const dryExamples = new Map(dry.body.examples.map((e: { conversation_id: string; actions: unknown }) => [e.conversation_id, e.actions]));
    assert.deepEqual(real, dryExamples, 'the same conversations, the same actions');
    assert.ok(dry.body.examples.every((e: { subject: string }) => subjects.includes(e.subject)));

    const bad = await w.api('POST', `/v1/automation/rules/${rule.id}/dry-run`, { days: 91 });
    assert.equal(bad.status, 400);
    const missing = await w.api('POST', '/v1/automation/rules/rule_nope/dry-run', {});
    assert.equal(missing.status, 404);
    assert.ok(w.clock.now().getTime() - new Date(before[0].created_at).getTime() < 7 * DAY);
    await disableAll(w);
  });
});
