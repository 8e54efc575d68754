// One label's list by activity (GET /v1/conversations?label=…&sort=activity) walks the label's own
// rows in activity order (migration 0082's columns, kept by triggers). Whatever moves a conversation
// (a new message, a status change, a label added or taken off, a merge) must move its place in the
// label's list exactly as in the unfiltered list: each step compares the label list, paged by cursor,
// with the unfiltered list filtered here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Item = { id: string; labels: string[]; status: string };

describe('a label list by activity', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  const clock = new ManualClock(new Date('2031-04-01T10:00:00Z'));
  const api = async (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.ownerToken, body });

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET }, clock });
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed)).address!;
  });
  after(() => s.stop());

  /** Every page of `query`, two at a time, following next_cursor. */
  async function pages(query: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 50; guard++) {
      const r = await api('GET', `/v1/conversations?${query}&sort=activity&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids.push(...r.body.data.map((c: Item) => c.id));
      cursor = r.body.next_cursor;
      if (!cursor) return ids;
    }
    throw new Error('more than 50 pages');
  }

  async function assertLabelLists(step: string) {
    const all = (await api('GET', '/v1/conversations?sort=activity&limit=200')).body.data as Item[];
    for (const label of ['billing', 'vip']) {
      for (const status of [undefined, 'open', 'closed']) {
        const expected = all.filter((c) => c.labels.includes(label) && (!status || c.status === status)).map((c) => c.id);
        const got = await pages(`label=${label}${status ? `&status=${status}` : ''}`);
        assert.deepEqual(got, expected, `${step}: label ${label}, status ${status ?? 'any'}`);
      }
    }
  }

  test('new messages, status changes, labels and merges move conversations in the label list', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      clock.advance(60_000);
      ids.push((await deliverMail(s, address, { From: `c${i}@labels.example`, Subject: `case ${i}` })).conversation_id);
    }
    for (const [i, labels] of [
      [0, ['billing']],
      [1, ['billing', 'vip']],
      [2, ['vip']],
      [3, ['billing']],
      [4, ['billing']],
      [6, ['billing', 'vip']],
    ] as const) {
      assert.equal((await api('PATCH', `/v1/conversations/${ids[i]}`, { labels })).status, 200);
    }
    await assertLabelLists('labelled');

    clock.advance(60_000);
    const rfcId = (await s.app.db.selectFrom('mail_ids').select('rfc_id').where('conversation_id', '=', ids[0]).executeTakeFirstOrThrow()).rfc_id;
    const reply = await deliverMail(s, address, { From: 'c0@labels.example', Subject: 'Re: case 0', 'In-Reply-To': `<${rfcId}>` }, 'Still waiting\r\n');
    assert.equal(reply.conversation_id, ids[0]);
    await assertLabelLists('a new message in the oldest');

    assert.equal((await api('PATCH', `/v1/conversations/${ids[3]}`, { status: 'closed' })).status, 200);
    assert.equal((await api('PATCH', `/v1/conversations/${ids[1]}`, { status: 'closed' })).status, 200);
    await assertLabelLists('two closed');

    assert.equal((await api('PATCH', `/v1/conversations/${ids[5]}`, { labels: ['billing'] })).status, 200);
    assert.equal((await api('PATCH', `/v1/conversations/${ids[6]}`, { labels: ['vip'] })).status, 200);
    await assertLabelLists('a label added and one taken off');

    clock.advance(60_000);
    const merged = await api('POST', `/v1/conversations/${ids[4]}/merge`, { into_id: ids[2] });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    await assertLabelLists('merged');

    assert.equal((await api('PATCH', `/v1/conversations/${ids[1]}`, { status: 'open' })).status, 200);
    await assertLabelLists('reopened');
  });
});
