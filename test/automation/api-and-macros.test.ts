// Automation rules' API (who may, the order, 404s) and macros (issue 36): personal macros seen only
// by their member, shared ones managed by owners and admins, run on one conversation or a selection.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { retentionRules } from '../../src/lifecycle/registry.js';
import { DAY } from '../../src/platform/clock.js';
import { addPerson } from '../helpers/fixtures.js';
import { type World, world } from './setup.js';

describe('automation rules API and macros', () => {
  let w: World;
  let admin: { personId: string; token: string };
  before(async () => {
    w = await world();
    admin = await addPerson(w.s.app, w.seed.workspaceId, 'admin');
  });
  after(() => w?.stop());

  const body = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    trigger: { type: 'customer_message' },
    actions: [{ type: 'mark_spam' }],
    ...extra,
  });

  test('owners and admins manage rules; agents get 403 before anything is checked; the list is in position order', async () => {
    const refused = await w.api('POST', '/v1/automation/rules', { nonsense: true }, w.agent.token);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal((await w.api('GET', '/v1/automation/rules', undefined, w.agent.token)).status, 403);
    assert.equal((await w.api('GET', '/v1/automation/runs', undefined, w.agent.token)).status, 403);
    const a = await w.api('POST', '/v1/automation/rules', body('A'), admin.token);
    assert.equal(a.status, 201, JSON.stringify(a.body));
    assert.equal(a.body.enabled, false, 'off until switched on');
    assert.deepEqual(a.body.conditions, { match: 'all', items: [] });
    assert.equal(a.body.last_run_at, null);
    const b = (await w.api('POST', '/v1/automation/rules', body('B'))).body;
    const c = (await w.api('POST', '/v1/automation/rules', body('C', { position: 0 }))).body;
    const order = async () =>
      ((await w.api('GET', '/v1/automation/rules')).body.data as { name: string; position: number }[]).map((r) => `${r.position}:${r.name}`);
    assert.deepEqual(await order(), ['0:C', '1:A', '2:B']);
    const moved = await w.api('PATCH', `/v1/automation/rules/${c.id}`, { position: 2 });
    assert.equal(moved.status, 200);
    assert.equal(moved.body.position, 2);
    assert.deepEqual(await order(), ['0:A', '1:B', '2:C']);
    assert.equal((await w.api('DELETE', `/v1/automation/rules/${a.body.id}`)).status, 204);
    assert.deepEqual(await order(), ['0:B', '1:C']);
    assert.equal((await w.api('GET', `/v1/automation/rules/${a.body.id}`)).status, 404);
    assert.equal((await w.api('PATCH', `/v1/automation/rules/${a.body.id}`, { enabled: true })).status, 404);
    const renamed = await w.api('PATCH', `/v1/automation/rules/${b.id}`, { name: '  Spam   filter ', enabled: true });
    assert.equal(renamed.body.name, 'Spam filter');
    assert.equal(renamed.body.enabled, true);
    const other = await w.api('GET', `/v1/automation/rules/${b.id}`, undefined, w.agent.token);
    assert.equal(other.status, 403);
    for (const r of (await w.api('GET', '/v1/automation/rules')).body.data) await w.api('DELETE', `/v1/automation/rules/${r.id}`);
  });

  test('personal macros are their member’s alone; shared ones every member runs and only managers change', async () => {
    const mine = await w.api('POST', '/v1/macros', { name: 'My triage', actions: [{ type: 'add_label', label: 'triaged' }] }, w.agent.token);
    assert.equal(mine.status, 201, JSON.stringify(mine.body));
    assert.equal(mine.body.shared, false);
    assert.equal(mine.body.owner_member_id, w.agent.personId);
    const refused = await w.api('POST', '/v1/macros', { name: 'Team', shared: true, actions: [{ type: 'mark_spam' }] }, w.agent.token);
    assert.equal(refused.status, 403);
    const shared = await w.api(
      'POST',
      '/v1/macros',
      {
        name: 'Close as billing',
        shared: true,
        actions: [
          { type: 'add_label', label: 'billing' },
          { type: 'set_status', status: 'closed' },
          { type: 'add_note', text: 'Closed by macro' },
        ],
      },
      admin.token,
    );
    assert.equal(shared.status, 201, JSON.stringify(shared.body));
    const names = async (token: string) => ((await w.api('GET', '/v1/macros', undefined, token)).body.data as { name: string }[]).map((m) => m.name);
    assert.deepEqual(await names(w.agent.token), ['Close as billing', 'My triage']);
    assert.deepEqual(await names(admin.token), ['Close as billing']);
    assert.equal((await w.api('PATCH', `/v1/macros/${mine.body.id}`, { name: 'x' }, admin.token)).status, 404, 'another member’s personal macro stays secret');
    assert.equal((await w.api('PATCH', `/v1/macros/${shared.body.id}`, { name: 'x' }, w.agent.token)).status, 403);
    const bad = await w.api('POST', '/v1/macros', { name: 'Bad', actions: [{ type: 'assign_member', member_id: 'per_nope' }] }, w.agent.token);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.issues[0].path.join('.'), 'actions.0.member_id');

    const { conversation_id: id } = await w.mail();
    await w.drain();
    const ran = await w.api('POST', `/v1/conversations/${id}/macros/${shared.body.id}`, undefined, w.agent.token);
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    assert.equal(ran.body.id, id);
    assert.equal(ran.body.status, 'closed');
    assert.deepEqual(ran.body.labels, ['billing']);
    const messages = (await w.api('GET', `/v1/conversations/${id}/messages?order=asc`)).body.data as any[];
    const line = messages.filter((m) => m.kind === 'event').at(-1);
    assert.equal(line.author.type, 'member');
    assert.equal(line.details.reason, 'macro');
    const note = messages.find((m) => m.kind === 'note');
    assert.equal(note.body, 'Closed by macro');
    assert.equal(note.author.member_id, w.agent.personId);

    const two = (await w.mail()).conversation_id;
    const bulk = await w.api('POST', `/v1/macros/${mine.body.id}/run`, { conversation_ids: [id, two, 'cv_nope'] }, w.agent.token);
    assert.equal(bulk.status, 200, JSON.stringify(bulk.body));
    assert.deepEqual(
      bulk.body.results.map((r: { conversation_id: string; ok: boolean; error?: { code: string } }) => [r.conversation_id, r.ok, r.error?.code ?? null]),
      [
        [id, true, null],
        [two, true, null],
        ['cv_nope', false, 'not_found'],
      ],
    );
    assert.deepEqual((await w.conversation(two)).labels, ['triaged']);
    const tooMany = await w.api(
      'POST',
      `/v1/macros/${mine.body.id}/run`,
      { conversation_ids: Array.from({ length: 101 }, (_, i) => `cv_${i}`) },
      w.agent.token,
    );
    assert.equal(tooMany.status, 400);
    assert.equal((await w.api('DELETE', `/v1/macros/${mine.body.id}`, undefined, admin.token)).status, 404);
    assert.equal((await w.api('DELETE', `/v1/macros/${mine.body.id}`, undefined, w.agent.token)).status, 204);
    assert.deepEqual(await names(w.agent.token), ['Close as billing']);
  });

  test('the run log is kept 30 days, newest first by cursor pages', async () => {
    await w.rule({ name: 'log', trigger: { type: 'customer_message' }, actions: [{ type: 'add_label', label: 'logged' }] });
    for (let i = 0; i < 3; i++) await w.mail();
    await w.drain();
    const page = await w.api('GET', '/v1/automation/runs?limit=2');
    assert.equal(page.body.data.length, 2);
    const next = await w.api('GET', `/v1/automation/runs?limit=2&cursor=${page.body.next_cursor}`);
    assert.ok(next.body.data.length >= 1);
    assert.ok(next.body.data[0].id < page.body.data[1].id, 'newest first, no repeats');
    const rule = retentionRules.find((r) => r.name === 'automation_runs')!;
    const count = async () => (await w.s.app.db.selectFrom('automation_runs').select('id').execute()).length;
    const before = await count();
    assert.ok(before >= 3);
    assert.equal(await rule.deleteBatch(w.s.app, new Date(w.clock.now().getTime() + 29 * DAY), 100), 0);
    assert.equal(await rule.deleteBatch(w.s.app, new Date(w.clock.now().getTime() + 31 * DAY), 100), before);
    assert.equal((await w.api('GET', '/v1/automation/runs?cursor=bad!')).status, 400);
  });
});
