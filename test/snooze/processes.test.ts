// Snooze across processes: the wake-up is a stored job, so a server killed with -9 right after the
// snooze loses nothing, and the servers that come after it (two on Postgres, sharing the database)
// wake the conversation exactly once. Real `svc serve` processes on the real clock: the test waits
// for a condition with a generous deadline, never for a fixed time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { createLogger } from '../../src/platform/log.js';
import { postgresUrl } from '../helpers/db.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, rawMail, seedEmailChannel } from '../helpers/mail.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function json(url: string, init: { method?: string; token: string; body?: unknown; raw?: Buffer }) {
  const headers: Record<string, string> = { authorization: `Bearer ${init.token}` };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: (init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body))) as BodyInit | undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('snooze across processes', () => {
  let te: TestEnv;
  let app: App;
  let seed: Seed;
  let address: string;
  const servers: ChildServer[] = [];

  before(async () => {
    te = await testEnv({ SVC_INGRESS_SECRET: INGRESS_SECRET });
    servers.push(await spawnServer(te.env));
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    seed = await seedWorkspace(app);
    address = (await seedEmailChannel(app, seed)).address!;
  });
  after(async () => {
    for (const s of servers) if (s.child.exitCode === null) await s.kill('SIGKILL');
    await app?.close();
    await te?.cleanup();
  });

  test('snoozed on a server killed with -9 at once; the next servers wake it exactly once', async () => {
    const a = servers[0];
    const mail = await json(`${a.url}/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      method: 'POST',
      token: INGRESS_SECRET,
      raw: rawMail({ To: address, From: 'Ada <ada@customer.example>', Subject: 'Printer' }),
    });
    assert.equal(mail.status, 201, JSON.stringify(mail.body));
    const id = mail.body.data[0].conversation_id as string;
    const until = new Date(Date.now() + 1500).toISOString();
    const snoozed = await json(`${a.url}/v1/conversations/${id}`, { method: 'PATCH', token: seed.apiKey, body: { snoozed_until: until } });
    assert.equal(snoozed.status, 200, JSON.stringify(snoozed.body));
    await a.kill('SIGKILL');

    const jobs = await app.db.selectFrom('jobs').selectAll().where('unique_key', '=', `snooze.wake:${id}`).execute();
    assert.equal(jobs.length, 1, 'the wake-up was stored with the snooze');

    // Two servers on Postgres (they share the work by leases); SQLite has one server at a time.
    servers.push(await spawnServer(te.env));
    if (postgresUrl) servers.push(await spawnServer(te.env));

    const conversation = () => app.db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await waitUntil(async () => (await conversation()).snoozed_at === null, 60_000, 'the conversation to wake');
    await waitUntil(
      async () => (await app.db.selectFrom('jobs').select('id').where('unique_key', '=', `snooze.wake:${id}`).execute()).length === 0,
      60_000,
      'the wake-up job to end',
    );
    const lines = await app.db.selectFrom('messages').select('details').where('conversation_id', '=', id).where('kind', '=', 'event').execute();
    const wakes = lines.filter((l) => (JSON.parse(l.details ?? '{}') as { reason?: string }).reason === 'snooze_ended');
    assert.equal(wakes.length, 1, 'woke once');
    const events = await app.db.selectFrom('events').select('data').where('type', '=', 'conversation.updated').execute();
    const wakeEvents = events.filter((e) => {
      const c = (JSON.parse(e.data) as { conversation?: { id?: string; snoozed_at?: string | null; status?: string } }).conversation;
      return c?.id === id && c.snoozed_at === null;
    });
    assert.equal(wakeEvents.length, 1, 'one conversation.updated for the wake-up');
    assert.equal((await conversation()).status, 'open');
  });
});
