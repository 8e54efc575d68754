// An old support mailbox with known history for migration tests (in a real Dovecot), and helpers to
// drive a migration through the API.
import assert from 'node:assert/strict';
import { connectReadOnly, type ReadOnlyMailbox } from '../../src/mailbox-migration/sources/imap.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, startDovecot } from './dovecot.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { seedEmailChannel } from './mail.js';
import { buildMail, daysAgo } from './mailbox.js';
import { startTestServer, type TestServer } from './server.js';

export const SUPPORT = 'support@acme.test';
export const SUPPORT_PASSWORD = 'app-pass-0001';
export const COLLEAGUE = 'colleague@acme.test';

export interface OldMailbox {
  /** Message-IDs by name. */
  ids: Record<string, string>;
  /** Messages in the chosen folders INBOX, Sent and Archive (Junk is never read). */
  total: number;
  toCopy: number;
  conversations: number;
}

/**
 * The history: threads A (customer wrote last, 1 day ago), B (60 days old, answered by a member),
 * C (team wrote last; attachments kept and omitted), D (same subject as A, no references), a
 * duplicate in INBOX and Archive, a message without Message-ID, an archived thread, and what is
 * skipped: an auto-reply, a message over the size limit, one before the date range, internal mail;
 * plus spam.
 */
export async function fillOldMailbox(d: Dovecot, now: Date, opts: { ownerEmail: string; bigBytes: number }): Promise<OldMailbox> {
  const ids = {
    a1: 'a1-printer@customer.test',
    a2: 'a2-printer@acme.test',
    a3: 'a3-printer@customer.test',
    b1: 'b1-invoice@customer.test',
    b2: 'b2-invoice@acme.test',
    c1: 'c1-login@customer.test',
    c2: 'c2-login@acme.test',
    d1: 'd1-printer@customer.test',
    dup: 'dup-1@customer.test',
    arch: 'arch-1@customer.test',
    auto: 'auto-1@vendor.test',
    big: 'big-1@customer.test',
    old: 'old-1@customer.test',
    internal: 'internal-1@acme.test',
  };
  const dup = await buildMail({ from: 'Gina <gina@customer.test>', to: SUPPORT, subject: 'Duplicate me', messageId: ids.dup, date: daysAgo(now, 6) });
  d.deliver(SUPPORT, 'INBOX', [
    {
      raw: await buildMail({
        from: 'Ada Lovelace <ada@customer.test>',
        to: SUPPORT,
        subject: 'Printer on fire',
        messageId: ids.a1,
        date: daysAgo(now, 3),
        text: 'It is on fire.',
      }),
      isNew: true,
      receivedAt: daysAgo(now, 3),
    },
    {
      raw: await buildMail({
        from: 'Ada Lovelace <ada@customer.test>',
        to: SUPPORT,
        subject: 'Re: Printer on fire',
        messageId: ids.a3,
        inReplyTo: ids.a2,
        references: [ids.a1, ids.a2],
        date: daysAgo(now, 1),
        text: 'Still burning.',
      }),
      flags: 'S',
    },
    {
      raw: await buildMail({ from: 'Bob <bob@customer.test>', to: SUPPORT, subject: 'Invoice question', messageId: ids.b1, date: daysAgo(now, 60) }),
      flags: 'S',
    },
    {
      raw: await buildMail({
        from: 'Carol <carol@customer.test>',
        to: SUPPORT,
        subject: 'Login broken',
        messageId: ids.c1,
        date: daysAgo(now, 5),
        attachments: [
          { filename: 'screenshot.png', content: Buffer.from('a small png'), contentType: 'image/png' },
          { filename: 'setup.exe', content: Buffer.from('MZ not really'), contentType: 'application/octet-stream' },
          { filename: 'big.pdf', content: Buffer.alloc(60_000, 7), contentType: 'application/pdf' },
        ],
      }),
      flags: 'RS',
    },
    {
      raw: await buildMail({ from: 'Dan <dan@customer.test>', to: SUPPORT, subject: 'Printer on fire', messageId: ids.d1, date: daysAgo(now, 2) }),
      flags: 'S',
    },
    {
      raw: await buildMail({
        from: 'No Reply <noreply@vendor.test>',
        to: SUPPORT,
        subject: 'Out of office',
        messageId: ids.auto,
        date: daysAgo(now, 4),
        headers: { 'Auto-Submitted': 'auto-replied' },
      }),
    },
    {
      raw: await buildMail({
        from: 'Eve <eve@customer.test>',
        to: SUPPORT,
        subject: 'Huge',
        messageId: ids.big,
        date: daysAgo(now, 3),
        text: 'x'.repeat(opts.bigBytes),
      }),
      flags: 'S',
    },
    { raw: await buildMail({ from: 'Frank <frank@customer.test>', to: SUPPORT, subject: 'Ancient', messageId: ids.old, date: daysAgo(now, 500) }), flags: 'S' },
    { raw: dup, flags: 'S' },
    { raw: await buildMail({ from: 'Hank <hank@customer.test>', to: SUPPORT, subject: 'No id', messageId: null, date: daysAgo(now, 7) }), flags: 'S' },
  ]);
  d.deliver(SUPPORT, 'Sent', [
    {
      raw: await buildMail({
        from: `Acme Support <${SUPPORT}>`,
        to: 'ada@customer.test',
        subject: 'Re: Printer on fire',
        messageId: ids.a2,
        inReplyTo: ids.a1,
        references: [ids.a1],
        date: daysAgo(now, 2),
        text: 'Unplug it.',
      }),
      flags: 'S',
    },
    {
      raw: await buildMail({
        from: `Owner <${opts.ownerEmail}>`,
        to: 'bob@customer.test',
        subject: 'Re: Invoice question',
        messageId: ids.b2,
        inReplyTo: ids.b1,
        references: [ids.b1],
        date: daysAgo(now, 59),
      }),
      flags: 'S',
    },
    {
      raw: await buildMail({
        from: `Acme Support <${SUPPORT}>`,
        to: 'carol@customer.test',
        subject: 'Re: Login broken',
        messageId: ids.c2,
        inReplyTo: ids.c1,
        references: [ids.c1],
        date: daysAgo(now, 4),
      }),
      flags: 'S',
    },
    {
      raw: await buildMail({ from: `Acme Support <${SUPPORT}>`, to: COLLEAGUE, subject: 'Internal note', messageId: ids.internal, date: daysAgo(now, 3) }),
      flags: 'S',
    },
  ]);
  d.deliver(SUPPORT, 'Archive', [
    { raw: dup, flags: 'S' },
    {
      raw: await buildMail({ from: 'Ivy <ivy@customer.test>', to: SUPPORT, subject: 'Old archived', messageId: ids.arch, date: daysAgo(now, 20) }),
      flags: 'S',
    },
  ]);
  d.deliver(SUPPORT, 'Junk', [{ raw: await buildMail({ from: 'spam@spam.test', to: SUPPORT, subject: 'You won', date: daysAgo(now, 1) }) }]);
  return { ids, total: 16, toCopy: 11, conversations: 7 };
}

/** An IMAP migration of SUPPORT's mailbox on `d` into the inbox (through its channel, or the one named), credentials set and tested; its id. */
export async function connectedImapMigration(s: TestServer, token: string, inboxId: string, d: Dovecot, opts: { channelId?: string } = {}): Promise<string> {
  const created = await s.request('POST', '/v1/migrations', {
    token,
    body: {
      provider: 'imap',
      source_address: SUPPORT,
      imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
      inbox_id: inboxId,
      ...(opts.channelId ? { channel_id: opts.channelId } : {}),
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const credentials = await s.request('PUT', `/v1/migrations/${id}/credentials`, { token, body: { password: SUPPORT_PASSWORD } });
  assert.equal(credentials.status, 200, JSON.stringify(credentials.body));
  assert.equal((await s.request('POST', `/v1/migrations/${id}/test`, { token })).body.ok, true);
  return id;
}

/** What a test that runs the scan and copy steps itself starts from (startStepScene). */
export interface StepScene {
  s: TestServer;
  seed: Seed;
  /** The migration's id. */
  id: string;
  /** A read-only connection to SUPPORT's mailbox, for the steps. */
  mailbox: ReadOnlyMailbox;
}

/**
 * A server whose jobs wait (the test runs the steps), a workspace with SUPPORT's e-mail channel, an
 * IMAP migration of SUPPORT's mailbox on `d` (credentials set and tested) and a read-only connection
 * to that mailbox. Close with stopStepScene.
 */
export async function startStepScene(d: Dovecot, clock: ManualClock, env: Record<string, string> = {}): Promise<StepScene> {
  const s = await startTestServer({ clock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', ...env } });
  await s.app.jobs.stop();
  const seed = await seedWorkspace(s.app);
  await seedEmailChannel(s.app, seed, { address: SUPPORT });
  const id = await connectedImapMigration(s, seed.apiKey, seed.inboxId, d);
  const mailbox = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: SUPPORT, password: SUPPORT_PASSWORD });
  return { s, seed, id, mailbox };
}

/** Ends what startStepScene started, and the Dovecot; any part may be missing (a failed `before`). */
export async function stopStepScene(scene: Partial<StepScene>, d: Dovecot | undefined): Promise<void> {
  await scene.mailbox?.logout();
  await scene.s?.stop();
  await d?.stop();
}

/** A Dovecot whose SUPPORT mailbox fillBulkMailbox filled, and a step scene on it (stopStepScene ends both). */
export async function startBulkStepScene(clock: ManualClock, fill: BulkOptions): Promise<StepScene & { d: Dovecot }> {
  const d = await startDovecot();
  d.addUser(SUPPORT, SUPPORT_PASSWORD);
  try {
    await fillBulkMailbox(d, SUPPORT, fill);
    return { d, ...(await startStepScene(d, clock)) };
  } catch (error) {
    await d.stop();
    throw error;
  }
}

/** Runs a migration through the API to a state, draining the background work on the way. */
/** JSON calls to a server by its URL (a spawned server, which has no `request`), as the holder of `token`. */
export function callerWith(token: string) {
  return async (url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}

export async function expectState(s: TestServer, token: string, id: string, state: string) {
  const r = await s.request('GET', `/v1/migrations/${id}`, { token });
  assert.equal(r.status, 200);
  const problems = s.logs.filter((l) => l.level === 'error' || l.level === 'warn').slice(-5);
  assert.equal(r.body.state, state, JSON.stringify({ attention: r.body.attention, logs: problems }));
  return r.body;
}

export interface BulkOptions {
  threads: number;
  /** Messages per thread (alternating customer and team), at least 1. */
  perThread: number;
  now: Date;
  /** Every n-th thread's first message carries an attachment of this many bytes (0: none). */
  attachmentEvery?: number;
  attachmentBytes?: number;
  customers?: number;
}

/** Date header text of RFC 5322 (as the composer writes it). */
function dateHeader(d: Date): string {
  return d.toUTCString().replace(/GMT$/, '+0000');
}

/**
 * A generated history written straight into the Maildir: threads in both directions (customer in
 * INBOX, team replies in Sent), spread over time, some with attachments. Each message shape is
 * built once by the MIME composer with placeholder header values, which are then replaced per
 * message (plain ASCII header text), so that a mailbox of 100,000 messages is made in seconds.
 */
export async function fillBulkMailbox(d: Dovecot, user: string, opts: BulkOptions): Promise<{ messages: number; threads: number }> {
  const attachment = opts.attachmentBytes ? Buffer.alloc(opts.attachmentBytes, 0x41) : undefined;
  const customers = opts.customers ?? Math.max(1, Math.floor(opts.threads / 3));
  const templates = new Map<string, string>();
  const template = async (fromTeam: boolean, reply: boolean, withFile: boolean) => {
    const key = `${fromTeam}${reply}${withFile}`;
    let t = templates.get(key);
    if (!t) {
      const raw = await buildMail({
        from: `Sender <tokfrom@tok.test>`,
        to: 'tokto@tok.test',
        subject: 'TOKSUBJECT',
        messageId: 'tokmsgid@tok.test',
        inReplyTo: reply ? 'tokreply@tok.test' : undefined,
        references: reply ? ['tokreply@tok.test'] : undefined,
        date: new Date(0),
        text: `A message of a support conversation.\n\n${'Some text of a support conversation. '.repeat(20)}`,
        attachments: withFile && attachment ? [{ filename: 'file.pdf', content: attachment, contentType: 'application/pdf' }] : undefined,
      });
      t = raw.toString('latin1');
      templates.set(key, t);
    }
    return t;
  };
  const inbox: { raw: Buffer; flags: string; receivedAt: Date }[] = [];
  const sent: { raw: Buffer; flags: string; receivedAt: Date }[] = [];
  let messages = 0;
  const flush = () => {
    if (inbox.length) d.deliver(user, 'INBOX', inbox.splice(0));
    if (sent.length) d.deliver(user, 'Sent', sent.splice(0));
  };
  for (let t = 0; t < opts.threads; t++) {
    const customer = `customer${t % customers}@bulk.test`;
    const start = new Date(opts.now.getTime() - (opts.threads - t) * 60_000);
    let previous: string | undefined;
    for (let i = 0; i < opts.perThread; i++) {
      const fromTeam = i % 2 === 1;
      const id = `t${t}-m${i}@${fromTeam ? 'acme' : 'bulk'}.test`;
      const date = new Date(start.getTime() + i * 1000);
      const withFile = !!attachment && i === 0 && !!opts.attachmentEvery && t % opts.attachmentEvery === 0;
      const raw = (await template(fromTeam, !!previous, withFile))
        .replace('tokfrom@tok.test', fromTeam ? user : customer)
        .replace('Sender <', fromTeam ? 'Acme Support <' : `Customer ${t % customers} <`)
        .replace('tokto@tok.test', fromTeam ? customer : user)
        .replace('TOKSUBJECT', i === 0 ? `Question ${t}` : `Re: Question ${t}`)
        .replace('tokmsgid@tok.test', id)
        .replace(/tokreply@tok\.test/g, previous ?? '')
        .replace(/^Date: .*$/m, `Date: ${dateHeader(date)}`);
      previous = id;
      (fromTeam ? sent : inbox).push({ raw: Buffer.from(raw, 'latin1'), flags: 'S', receivedAt: date });
      messages++;
    }
    if (inbox.length + sent.length >= 1000) flush();
  }
  flush();
  return { messages, threads: opts.threads };
}
