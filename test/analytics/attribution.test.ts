import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createProperty } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { createChatChannel } from '../../src/channels/service.js';
import { deleteWorkspace, runWorkspaceDeletion } from '../../src/lifecycle/workspace-deletion.js';
import { HOUR, ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { buildMmdb } from '../helpers/mmdb.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhooks.js';

const ORIGIN = 'https://shop.example';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

describe('analytics: a widget conversation carries the visit it came from', () => {
  let s: TestServer;
  let seed: Seed;
  let rx: Receiver;
  let publicKey: string;
  let clock: ManualClock;
  let noVisit: string;
  let chromeConversation: string;
  let propertyId: string;

  before(async () => {
    clock = new ManualClock();
    clock.set('2026-03-10T09:00:00Z');
    s = await startTestServer({ clock, env: { SVC_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    seed = await seedWorkspace(s.app);
    const channel = await createChatChannel(s.app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      name: 'Shop',
      origins: [ORIGIN],
      allowAnonymous: true,
    });
    publicKey = channel.public_key!;
    propertyId = (await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'shop.example', chatChannelId: channel.id })).id;
    // A second property on another channel: its visits never attach to this channel's conversations.
    const other = await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Blog', origins: ['https://blog.example'] });
    await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'blog.example', chatChannelId: other.id });
    const geo = path.join(s.app.config.dataDir, 'geoip');
    fs.mkdirSync(geo, { recursive: true });
    fs.writeFileSync(
      path.join(geo, 'location.mmdb'),
      buildMmdb({ databaseType: 'GeoLite2-Country', entries: [{ network: '127.0.0.0/8', record: { country: { iso_code: 'NL' } } }] }),
    );
    ingestionOf(s.app).geo.refresh();
    rx = await startReceiver();
    const hook = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: `${rx.url}/hook`, events: ['conversation.created'] } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
  });
  after(async () => {
    await rx.close();
    await s.stop();
  });

  async function pageview(u: string, ua: string, opts: { r?: string; domain?: string; origin?: string } = {}) {
    const r = await s.request('POST', '/a/e', {
      raw: JSON.stringify({ d: opts.domain ?? 'shop.example', u, r: opts.r ?? null, w: 1280 }),
      headers: { 'content-type': 'text/plain', origin: opts.origin ?? ORIGIN, 'user-agent': ua },
    });
    assert.equal(r.status, 202);
    assert.equal(r.headers.get('svc-analytics-dropped'), null);
  }

  async function chat(ua: string, headers: Record<string, string> = {}) {
    const h = { origin: ORIGIN, 'user-agent': ua, ...headers };
    const v = await s.request('POST', '/v1/widget/sessions', { body: { public_key: publicKey }, headers: h });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    const started = await s.request('POST', '/v1/widget/conversations', { token: v.body.token, body: { body: 'Is the blue one in stock?' }, headers: h });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    assert.equal(started.body.visit, undefined, 'the visitor is not shown its own analytics');
    return started.body.conversation.id as string;
  }

  /** The conversation.created delivery of a conversation (waits for more deliveries until it came). */
  async function deliveryOf(conversationId: string) {
    for (let n = 1; ; n++) {
      const found = (await rx.waitFor(n)).map((d) => JSON.parse(d.body)).find((p) => p.data.conversation.id === conversationId);
      if (found) return found;
    }
  }

  const read = async (id: string) => {
    const r = await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey });
    assert.equal(r.status, 200);
    return r.body;
  };

  test('entry page, source, campaign, country, device and the pages of the day, in the API answer and the webhook', async () => {
    await pageview('https://shop.example/?utm_source=newsletter&utm_medium=email&utm_campaign=spring&token=secret', CHROME, {
      r: 'https://mail.example.net/inbox',
    });
    clock.advance(60_000);
    await pageview('https://shop.example/shoes/blue', CHROME);
    clock.advance(60_000);
    await pageview('https://blog.example/post', CHROME, { domain: 'blog.example', origin: 'https://blog.example' });
    clock.advance(60_000);
    const opened = await s.request('POST', '/a/e', {
      raw: JSON.stringify({ d: 'shop.example', u: 'https://shop.example/shoes/blue', n: 'Chat Opened', w: 1280 }),
      headers: { 'content-type': 'text/plain', origin: ORIGIN, 'user-agent': CHROME },
    });
    assert.equal(opened.headers.get('svc-analytics-dropped'), null);
    const id = await chat(CHROME);
    chromeConversation = id;

    const { visit } = await read(id);
    assert.ok(visit, 'the conversation has its visit');
    assert.equal(visit.entry_page, '/');
    assert.equal(visit.referrer, 'mail.example.net');
    assert.equal(visit.source, 'newsletter');
    assert.deepEqual(visit.utm, { source: 'newsletter', medium: 'email', campaign: 'spring' });
    assert.equal(visit.country, 'NL');
    assert.equal(visit.browser, 'Chrome');
    assert.equal(visit.os, 'Windows');
    assert.equal(visit.device, 'desktop');
    assert.equal(visit.started_at, '2026-03-10T09:00:00.000Z');
    assert.deepEqual(
      visit.pages.map((p: { path: string }) => p.path),
      ['/', '/shoes/blue'],
      'the shop’s pages only (the blog is another channel’s property)',
    );

    const payload = await deliveryOf(id);
    assert.equal(payload.type, 'conversation.created');
    assert.deepEqual(payload.data.visit, visit, 'the webhook carries the same visit');

    // The funnel's "Conversation Started" event joins the visit; the copy keeps no address or hash.
    await ingestionOf(s.app).writer.flush();
    const started = await s.app.db.selectFrom('analytics_events').selectAll().where('name', '=', 'Conversation Started').execute();
    assert.equal(started.length, 1);
    assert.equal(started[0].path, '/shoes/blue');
    const visitRow = await s.app.db.selectFrom('analytics_visits').select(['id', 'events']).where('id', '=', started[0].visit_id!).executeTakeFirstOrThrow();
    assert.equal(Number(visitRow.events), 4, 'two pageviews, the chat opened and the conversation');
    const stored = JSON.stringify(await s.app.db.selectFrom('analytics_conversation_visits').selectAll().execute());
    for (const secret of ['127.0.0.1', started[0].visitor_id!, 'secret', 'Chrome/131']) assert.ok(!stored.includes(secret), secret);
  });

  test('another browser from the same address, a Sec-GPC visitor and one without pageviews get no visit', async () => {
    await pageview('https://shop.example/gpc', IPHONE);
    noVisit = await chat(FIREFOX);
    assert.equal((await read(noVisit)).visit, null, 'no pageview from this user agent');
    assert.equal((await read(await chat(IPHONE, { 'sec-gpc': '1' }))).visit, null, 'Sec-GPC: 1 is never tied');
    const { visit } = await read(await chat(IPHONE));
    assert.equal(visit.device, 'mobile');
    assert.equal(visit.entry_page, '/gpc');
  });

  test('a visit from yesterday (before midnight UTC) still attaches; a conversation without one carries visit: null in the webhook', async () => {
    clock.set('2026-03-10T23:50:00Z');
    await pageview('https://shop.example/late', FIREFOX);
    clock.set('2026-03-11T00:10:00Z');
    const id = await chat(FIREFOX);
    const { visit } = await read(id);
    assert.equal(visit.entry_page, '/late');
    assert.equal((await deliveryOf(id)).data.visit.entry_page, '/late');
    assert.equal((await deliveryOf(noVisit)).data.visit, null, 'a chat without a visit says so');
    clock.advance(2 * 24 * HOUR);
    const lost = await chat(FIREFOX);
    assert.equal((await read(lost)).visit, null, 'the salts of two days ago are gone: the visitor cannot be found');
  });

  test('the funnel: visitors → chat opened → conversations → resolved → rated, overall, by source and by page', async () => {
    await s.request('PATCH', `/v1/conversations/${chromeConversation}`, { token: seed.apiKey, body: { status: 'closed' } });
    await s.app.db.updateTable('conversations').set({ rating_score: 5, rated_at: clock.now().toISOString() }).where('id', '=', chromeConversation).execute();
    const funnel = async (by?: string) => {
      const r = await s.request('GET', `/v1/analytics/funnel?property_id=${propertyId}&period=custom&from=2026-03-10&to=2026-03-11${by ? `&by=${by}` : ''}`, {
        token: seed.apiKey,
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.results as Record<string, string | number | null>[];
    };
    // Visitors: Chrome, the iPhone and Firefox (late); conversations tied: Chrome's, the iPhone's, Firefox's late one.
    assert.deepEqual(await funnel(), [{ value: null, visitors: 3, chat_opened: 1, conversations: 3, resolved: 1, rated: 1 }]);
    assert.deepEqual(await funnel('source'), [
      { value: null, visitors: 2, chat_opened: 0, conversations: 2, resolved: 0, rated: 0 },
      { value: 'newsletter', visitors: 1, chat_opened: 1, conversations: 1, resolved: 1, rated: 1 },
    ]);
    const pages = await funnel('page');
    assert.deepEqual(
      pages.find((r) => r.value === '/shoes/blue'),
      { value: '/shoes/blue', visitors: 1, chat_opened: 1, conversations: 1, resolved: 1, rated: 1 },
      'the page the conversation started on',
    );
    assert.deepEqual(
      pages.find((r) => r.value === '/'),
      { value: '/', visitors: 1, chat_opened: 0, conversations: 0, resolved: 0, rated: 0 },
    );
    const bad = await s.request('GET', `/v1/analytics/funnel?property_id=${propertyId}&by=os`, { token: seed.apiKey });
    assert.equal(bad.status, 400);
  });

  test('the funnel takes the dashboard’s filters: visit dimensions, the page (where chats opened and conversations started); event:name is refused', async () => {
    const funnel = async (filters: string, by?: string) => {
      const q = new URLSearchParams({ property_id: propertyId, period: 'custom', from: '2026-03-10', to: '2026-03-11', filters, ...(by ? { by } : {}) });
      const r = await s.request('GET', `/v1/analytics/funnel?${q}`, { token: seed.apiKey });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.filters, filters);
      return r.body.results as Record<string, string | number | null>[];
    };
    const row = (visitors: number, chat_opened: number, conversations: number, resolved: number, rated: number, value: string | null = null) => ({
      value,
      visitors,
      chat_opened,
      conversations,
      resolved,
      rated,
    });
    // Chrome came from the newsletter (closed, rated); the iPhone (mobile) and Firefox (/late) had no source.
    assert.deepEqual(await funnel('visit:source==newsletter'), [row(1, 1, 1, 1, 1)]);
    assert.deepEqual(await funnel('visit:source!=newsletter'), [row(2, 0, 2, 0, 0)], 'no source passes != as in the stats');
    assert.deepEqual(await funnel('visit:device==mobile'), [row(1, 0, 1, 0, 0)]);
    assert.deepEqual(await funnel('event:page==/shoes/blue', 'source'), [row(1, 1, 1, 1, 1, 'newsletter')]);
    assert.deepEqual(await funnel('visit:source!=newsletter;event:page==/late', 'page'), [row(1, 0, 1, 0, 0, '/late')]);
    assert.deepEqual(await funnel('visit:country==DE'), []);
    for (const bad of ['event:name==Signup', 'visit:exit_page==/', 'visit:nope==x', 'visit:source==']) {
      const q = new URLSearchParams({ property_id: propertyId, filters: bad });
      const r = await s.request('GET', `/v1/analytics/funnel?${q}`, { token: seed.apiKey });
      assert.equal(r.status, 400, bad);
      assert.equal(r.body.error.code, 'invalid_request', bad);
    }
  });

  test('deleting the workspace deletes the conversations’ visits', async () => {
    assert.ok((await s.app.db.selectFrom('analytics_conversation_visits').select('conversation_id').execute()).length > 0);
    await deleteWorkspace(s.app, { workspaceId: seed.workspaceId, requestedBy: 'operator' });
    await runWorkspaceDeletion(s.app, seed.workspaceId);
    assert.equal((await s.app.db.selectFrom('analytics_conversation_visits').select('conversation_id').execute()).length, 0);
  });
});
