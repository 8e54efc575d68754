// The reader across processes: `kill -9` of the server in the middle of reading loses and doubles
// nothing (the UID is recorded after the mail is stored; a mail read again is found by its digest),
// and two servers on one Postgres run one reader per channel (the lease), the other taking over
// once the holder is gone and its lease has run out.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { createLogger } from '../../src/platform/log.js';
import { postgresUrl } from '../helpers/db.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { buildMail, newMessageId } from '../helpers/mailbox.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

const USER = 'desk@acme.test';
const PASSWORD = 'desk-pass-1';

async function waitUntil<T>(what: string, check: () => Promise<T | false | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('mailbox reader across processes', { skip: dovecotMissing }, () => {
  let te: TestEnv;
  let app: App;
  let d: Dovecot;
  let seed: Seed;
  const servers: ChildServer[] = [];

  before(async () => {
    d = await startDovecot();
    d.addUser(USER, PASSWORD);
    te = await testEnv({ SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MAILBOX_READER_POLL_SECONDS: '1' });
    // The test's own process writes into the same database, as a command beside the servers would.
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
  });
  after(async () => {
    for (const s of servers) if (s.child.exitCode === null) await s.kill('SIGKILL');
    await app?.close();
    await te?.cleanup();
    await d?.stop();
  });

  const readingOf = (channelId: string) => app.db.selectFrom('mailbox_readers').selectAll().where('channel_id', '=', channelId).executeTakeFirst();
  const countOf = async (ids: string[]) => {
    const rows = await app.db.selectFrom('messages').select('mail_message_id').where('mail_message_id', 'in', ids).execute();
    return rows.length;
  };
  /** Rawlog sessions (one .in file each) that sent IDLE: one per running reader. */
  const idleSessions = () =>
    fs.readdirSync(path.join(d.dir, 'rawlog')).filter((f) => f.endsWith('.in') && / IDLE\r?\n/.test(fs.readFileSync(path.join(d.dir, 'rawlog', f), 'utf8')));

  test('kill -9 in the middle of reading: after a restart every mail is stored exactly once', async () => {
    const a = await spawnServer(te.env);
    servers.push(a);
    seed = await seedWorkspace(app);
    const channel = await seedEmailChannel(app, seed, { address: USER });
    const r = await fetch(`${a.url}/v1/channels/${channel.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reading: { kind: 'imap', host: d.host, port: d.port, tls: 'none', username: USER, password: PASSWORD } }),
    });
    assert.equal(r.status, 200, await r.text());
    await waitUntil('the reader to connect', async () => (await readingOf(channel.id))?.state === 'idle', 20_000);
    const ids = Array.from({ length: 40 }, () => newMessageId('customer.test'));
    const now = new Date();
    d.deliver(
      USER,
      'INBOX',
      await Promise.all(
        ids.map(async (id, i) => ({
          raw: await buildMail({ from: `C${i} <c${i}@customer.test>`, to: USER, subject: `Question ${i}`, messageId: id, date: now, text: 'x'.repeat(20_000) }),
          isNew: true,
        })),
      ),
    );
    await waitUntil('some mail read', async () => (await countOf(ids)) >= 3, 20_000);
    await a.kill('SIGKILL');
    const stored = await countOf(ids);
    const b = await spawnServer(te.env);
    servers.push(b);
    await waitUntil('every mail', async () => (await countOf(ids)) >= ids.length, 30_000);
    // Settled: the folder's last UID covers them all and nothing more arrives.
    await waitUntil(
      'the last UID',
      async () => {
        const f = await app.db
          .selectFrom('mailbox_reader_folders')
          .select('last_uid')
          .where('channel_id', '=', channel.id)
          .where('role', '=', 'inbox')
          .executeTakeFirst();
        return f && f.last_uid >= ids.length;
      },
      10_000,
    );
    assert.equal(await countOf(ids), ids.length, `each mail once (${stored} were stored before the kill)`);
    await b.kill('SIGTERM');
  });

  test('two servers on one Postgres: one reader per channel; the other takes over when the holder dies', {
    skip: postgresUrl ? false : 'several servers share one Postgres database (SVC_TEST_DATABASE_URL)',
  }, async () => {
    const channel = (await app.db.selectFrom('mailbox_readers').select('channel_id').executeTakeFirstOrThrow()).channel_id;
    const before = idleSessions().length;
    const a = await spawnServer(te.env);
    const b = await spawnServer(te.env);
    servers.push(a, b);
    await waitUntil('a reader', async () => idleSessions().length > before && (await readingOf(channel))?.state === 'idle', 20_000);
    // Several poll rounds (1 s): a second reader would have opened its own IDLE session by now.
    await sleep(4000);
    assert.equal(idleSessions().length, before + 1, 'one reader');
    const holder = (await readingOf(channel))!.lease_owner!;
    const presences = await app.db.selectFrom('server_meta').select(['key', 'value']).where('key', '=', `server_running:${holder}`).executeTakeFirstOrThrow();
    const pid = JSON.parse(presences.value).pid as number;
    const [dying, other] = a.child.pid === pid ? [a, b] : [b, a];
    await dying.kill('SIGKILL');
    // The other server waits for the lease to run out (30 s), then reads.
    await waitUntil(
      'the other server to take over',
      async () => {
        const row = await readingOf(channel);
        return row && row.lease_owner !== holder && row.lease_owner !== null && row.state === 'idle';
      },
      60_000,
    );
    const id = newMessageId('customer.test');
    d.deliver(USER, 'INBOX', [
      { raw: await buildMail({ from: 'Late <late@customer.test>', to: USER, subject: 'After the takeover', messageId: id, date: new Date() }), isNew: true },
    ]);
    await waitUntil('mail read by the other server', async () => (await countOf([id])) === 1, 10_000);
    await other.kill('SIGTERM');
  });
});
