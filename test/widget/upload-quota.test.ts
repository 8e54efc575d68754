import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createChatChannel } from '../../src/channels/service.js';
import { DAY, ManualClock } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORIGIN = 'https://shop.example.com';
const MB = 1_000_000;

async function widgetServer(env: Record<string, string>, clock = new ManualClock('2026-03-01T10:00:00Z')) {
  const s = await startTestServer({ clock, env: { SVC_TRUSTED_PROXIES: '127.0.0.1', ...env } });
  const seed = await seedWorkspace(s.app);
  const channel = await createChatChannel(s.app, {
    workspaceId: seed.workspaceId,
    inboxId: seed.inboxId,
    name: 'Widget',
    origins: [ORIGIN],
    allowAnonymous: true,
  });
  /** A visitor at `address` (behind the trusted proxy) with a conversation. */
  async function visitor(address: string) {
    const headers = { origin: ORIGIN, 'x-forwarded-for': address };
    const session = await s.request('POST', '/v1/widget/sessions', { body: { public_key: channel.public_key }, headers });
    const token = session.body.token as string;
    const started = await s.request('POST', '/v1/widget/conversations', { token, body: { body: 'Hello' }, headers });
    const conversationId = started.body.conversation.id as string;
    return {
      upload: (bytes: number) =>
        s.request('POST', `/v1/widget/conversations/${conversationId}/attachments?filename=f.txt`, {
          token,
          raw: Buffer.alloc(bytes, 'a'),
          headers: { ...headers, 'content-type': 'text/plain' },
        }),
      /** The same without Content-Length: the server learns the size while it stores. */
      async uploadStreamed(bytes: number) {
        const res = await fetch(`${s.url}/v1/widget/conversations/${conversationId}/attachments?filename=f.txt`, {
          method: 'POST',
          headers: { ...headers, authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
          body: Readable.toWeb(Readable.from([Buffer.alloc(bytes / 2, 'b'), Buffer.alloc(bytes / 2, 'c')])) as never,
          duplex: 'half',
        } as RequestInit);
        return { status: res.status, body: await res.json(), headers: res.headers };
      },
      send: (attachmentIds: string[]) =>
        s.request('POST', `/v1/widget/conversations/${conversationId}/messages`, { token, body: { body: '', attachment_ids: attachmentIds }, headers }),
    };
  }
  const stored = async () =>
    Number(
      (
        await s.app.db
          .selectFrom('attachments')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { s, visitor, stored, clock };
}

function assertQuota(r: { status: number; body: any; headers: Headers }, quota: string, limit: number) {
  assert.equal(r.status, 429, JSON.stringify(r.body));
  assert.equal(r.body.error.code, 'upload_quota_exceeded');
  assert.equal(r.body.error.quota, quota);
  assert.equal(r.body.error.limit_bytes, limit);
  assert.ok(Number(r.headers.get('retry-after')) > 0);
}

describe('widget uploads: size and quotas per session and per address', () => {
  let w: Awaited<ReturnType<typeof widgetServer>>;
  before(async () => {
    w = await widgetServer({
      SVC_ATTACHMENT_MAX_BYTES: String(1.6 * MB),
      SVC_WIDGET_UPLOAD_SESSION_BYTES: String(3 * MB),
      SVC_WIDGET_UPLOAD_ADDRESS_BYTES: String(4 * MB),
      SVC_WIDGET_UPLOAD_WORKSPACE_DAILY_BYTES: String(100 * MB),
    });
  });
  after(() => w.s.stop());

  test('the upload route follows SVC_ATTACHMENT_MAX_BYTES, above the 1 MiB body limit of other routes', async () => {
    const v = await w.visitor('203.0.113.1');
    const big = await v.upload(1.5 * MB);
    assert.equal(big.status, 201, JSON.stringify(big.body));
    assert.equal(big.body.size, 1.5 * MB);
    const tooBig = await v.upload(1.6 * MB + 1);
    assert.equal(tooBig.status, 413);
    assert.equal(tooBig.body.error.code, 'too_large');
  });

  test('unsent uploads of one session stop at SVC_WIDGET_UPLOAD_SESSION_BYTES; sending frees the budget', async () => {
    const v = await w.visitor('203.0.113.2');
    const first = await v.upload(1.5 * MB);
    assert.equal((await v.upload(1.5 * MB)).status, 201);
    const before = await w.stored();
    assertQuota(await v.upload(10), 'session', 3 * MB);
    assertQuota(await v.uploadStreamed(10), 'session', 3 * MB);
    assert.equal(await w.stored(), before, 'nothing stored beyond the quota');
    assert.equal((await v.send([first.body.id])).status, 201);
    assert.equal((await v.upload(1.4 * MB)).status, 201);
  });

  test('unsent uploads from one address stop at SVC_WIDGET_UPLOAD_ADDRESS_BYTES across its sessions; other addresses go on', async () => {
    const a = await w.visitor('198.51.100.7');
    const b = await w.visitor('198.51.100.7');
    assert.equal((await a.upload(1.5 * MB)).status, 201);
    assert.equal((await a.upload(1.5 * MB)).status, 201);
    const before = await w.stored();
    // Declared larger than what is left: refused before the body is read.
    assertQuota(await b.upload(1.5 * MB), 'address', 4 * MB);
    // Not declared: refused once the stored bytes pass what is left, and nothing is kept.
    assertQuota(await b.uploadStreamed(1.2 * MB), 'address', 4 * MB);
    assert.equal(await w.stored(), before);
    assert.equal((await b.upload(0.9 * MB)).status, 201);
    const other = await w.visitor('198.51.100.8');
    assert.equal((await other.upload(1.5 * MB)).status, 201);
  });
});

describe('widget uploads: quota per workspace per day', () => {
  test('uploads to a workspace, sent or not, stop at SVC_WIDGET_UPLOAD_WORKSPACE_DAILY_BYTES for 24 hours', async () => {
    const w = await widgetServer({
      SVC_ATTACHMENT_MAX_BYTES: String(1.6 * MB),
      SVC_WIDGET_UPLOAD_WORKSPACE_DAILY_BYTES: String(2 * MB),
    });
    try {
      const a = await w.visitor('203.0.113.10');
      const up = await a.upload(1.5 * MB);
      assert.equal(up.status, 201);
      assert.equal((await a.send([up.body.id])).status, 201);
      const b = await w.visitor('203.0.113.11');
      const refused = await b.upload(MB);
      assertQuota(refused, 'workspace', 2 * MB);
      assert.ok(Number(refused.headers.get('retry-after')) <= DAY / 1000);
      assert.equal((await b.upload(0.5 * MB)).status, 201);
      w.clock.advance(DAY + 1000);
      assert.equal((await b.upload(1.5 * MB)).status, 201);
    } finally {
      await w.s.stop();
    }
  });
});
