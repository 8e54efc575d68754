// A copy batch writes the conversations it creates at its end, in a few multi-row inserts (issue 19).
// What a later message of the same batch must see of them still counts: the same mail in two
// folders is stored once (without a Message-ID, the plan cannot tell, only the copy's digest), and a
// later thread that names a message of the batch finds its conversation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseHeaderBlock, parseMail } from '../../src/mail/parse.js';
import { copyStep } from '../../src/mailbox-migration/copy/copy.js';
import { finishScan } from '../../src/mailbox-migration/copy/finish-scan.js';
import { chooseFolders, scanParserOf, scanStep } from '../../src/mailbox-migration/copy/scan.js';
import type { ReadOnlyMailbox } from '../../src/mailbox-migration/sources/imap.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { INGRESS_SECRET } from '../helpers/mail.js';
import { buildMail } from '../helpers/mailbox.js';
import { type StepScene, SUPPORT, SUPPORT_PASSWORD, startStepScene, stopStepScene } from '../helpers/migration.js';
import type { TestServer } from '../helpers/server.js';

/** Scans the scene's mailbox, plans it, starts the migration and copies it all in one copy step. */
async function scanAndCopy({ s, seed, id, mailbox }: StepScene): Promise<void> {
  const migration = () => s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
  assert.equal(await scanStep(s.app, await migration(), mailbox, 60_000, scanParserOf(parseHeaderBlock)), 'done');
  await finishScan(s.app, await migration(), chooseFolders(await migration(), await mailbox.folders()));
  assert.equal((await s.request('POST', `/v1/migrations/${id}/start`, { token: seed.apiKey })).status, 202);
  const limits = { batchThreads: 100, batchMessages: 200, batchBytes: 8 * 1024 * 1024 };
  assert.equal(await copyStep(s.app, await migration(), mailbox, { parse: parseMail, limits }, 60_000), 'done');
}

describe('a copy batch and the conversations it creates', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  let mailbox: ReadOnlyMailbox;
  const now = new Date();
  const clock = new ManualClock(now);
  const daysAgo = (n: number) => new Date(now.getTime() - n * 86_400_000);

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    const noId = await buildMail({ from: 'Hank <hank@customer.test>', to: SUPPORT, subject: 'No id, two folders', messageId: null, date: daysAgo(3) });
    d.deliver(SUPPORT, 'INBOX', [
      { raw: noId, flags: 'S' },
      {
        raw: await buildMail({ from: 'Ada <ada@customer.test>', to: SUPPORT, subject: 'Question', messageId: 'q1@customer.test', date: daysAgo(5) }),
        flags: 'S',
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      { raw: noId, flags: 'S' },
      {
        raw: await buildMail({
          from: `Support <${SUPPORT}>`,
          to: 'ada@customer.test',
          subject: 'Re: Question',
          messageId: 'a1@acme.test',
          inReplyTo: 'q1@customer.test',
          references: ['q1@customer.test'],
          date: daysAgo(4),
        }),
        flags: 'S',
      },
    ]);
    ({ s, seed, id, mailbox } = await startStepScene(d, clock));
  });
  after(async () => {
    await stopStepScene({ s, mailbox }, d);
  });

  test('the same mail without Message-ID in two folders is stored once; a thread keeps one conversation', async () => {
    await scanAndCopy({ s, seed, id, mailbox });

    const items = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['folder', 'subject', 'status', 'skip_reason', 'message_id', 'conversation_id'])
      .where('migration_id', '=', id)
      .execute();
    const noId = items.filter((i) => i.subject === 'No id, two folders');
    assert.deepEqual(noId.map((i) => i.status).sort(), ['copied', 'duplicate']);
    assert.equal(noId[0].message_id, noId[1].message_id, 'the duplicate names the stored copy');
    assert.equal(noId[0].conversation_id, noId[1].conversation_id);

    const messages = await s.app.db
      .selectFrom('messages')
      .select(['id', 'conversation_id', 'kind', 'subject', 'direction', 'created_at'])
      .where('workspace_id', '=', seed.workspaceId)
      .execute();
    const mails = messages.filter((m) => m.kind === 'message');
    assert.equal(mails.length, 3);
    const thread = items.filter((i) => i.subject === 'Question' || i.subject === 'Re: Question');
    assert.equal(new Set(thread.map((i) => i.conversation_id)).size, 1, 'question and answer in one conversation');
    const conversations = await s.app.db.selectFrom('conversations').selectAll().where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(conversations.length, 2);
    for (const c of conversations) {
      const own = messages.filter((m) => m.conversation_id === c.id);
      const newest = own.filter((m) => m.kind === 'message').sort((a, b) => (a.created_at < b.created_at ? 1 : -1))[0];
      const divider = own.find((m) => m.kind === 'event');
      assert.ok(divider, 'the divider after the imported history');
      assert.equal(divider.created_at, new Date(new Date(newest.created_at).getTime() + 1).toISOString());
      assert.equal(c.last_message_at, newest.created_at);
      assert.equal(c.updated_at, now.toISOString(), 'retention counts from the day of the import');
      assert.equal(c.imported, 1);
    }
    // The answered question waits for the customer; the unanswered mail is open.
    assert.equal(conversations.find((c) => c.id === thread[0].conversation_id)?.status, 'pending');
    assert.equal(conversations.find((c) => c.id === noId[0].conversation_id)?.status, 'open');
    // Stored once, findable as such: the stored-mail records point at the messages written.
    const digests = await s.app.db.selectFrom('mail_digests').select(['message_id']).where('workspace_id', '=', seed.workspaceId).execute();
    assert.deepEqual(digests.map((r) => r.message_id).sort(), mails.map((m) => m.id).sort());
    const ids = await s.app.db.selectFrom('mail_ids').select(['rfc_id', 'conversation_id']).where('workspace_id', '=', seed.workspaceId).execute();
    assert.deepEqual(ids.map((r) => r.rfc_id).sort(), ['a1@acme.test', 'q1@customer.test']);
  });
});

// A batch looks up stored copies, the conversations of named Message-IDs and contacts once for all
// its messages (issue 19); the answers must be those of the inbox as it was: mail that arrived by
// mail before is a duplicate, a reply to it joins its conversation, a known contact is reused.
describe('a copy batch and what the inbox held before', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  let mailbox: ReadOnlyMailbox;
  const now = new Date();
  const clock = new ManualClock(now);
  const daysAgo = (n: number) => new Date(now.getTime() - n * 86_400_000);
  let question: Buffer;
  let shipping: Buffer;

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    question = await buildMail({ from: 'Bo <bo@customer.test>', to: SUPPORT, subject: 'Invoice', messageId: 'p1@customer.test', date: daysAgo(6) });
    // Arrives by mail only (deleted from the old mailbox); Bo's follow-up to it is in the old mailbox.
    shipping = await buildMail({ from: 'Bo <bo@customer.test>', to: SUPPORT, subject: 'Shipping', messageId: 's1@customer.test', date: daysAgo(4) });
    d.deliver(SUPPORT, 'INBOX', [
      { raw: question, flags: 'S' },
      {
        raw: await buildMail({ from: 'Cy Known <CY@customer.test>', to: SUPPORT, subject: 'Hello', messageId: 'n1@customer.test', date: daysAgo(2) }),
        flags: 'S',
      },
      {
        raw: await buildMail({
          from: 'Bo <bo@customer.test>',
          to: SUPPORT,
          subject: 'Re: Shipping',
          messageId: 's2@customer.test',
          inReplyTo: 's1@customer.test',
          references: ['s1@customer.test'],
          date: daysAgo(3),
        }),
        flags: 'S',
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      {
        raw: await buildMail({
          from: `Support <${SUPPORT}>`,
          to: 'bo@customer.test',
          subject: 'Re: Invoice',
          messageId: 'r1@acme.test',
          inReplyTo: 'p1@customer.test',
          references: ['p1@customer.test'],
          date: daysAgo(5),
        }),
        flags: 'S',
      },
    ]);
    ({ s, seed, id, mailbox } = await startStepScene(d, clock, { SVC_INGRESS_SECRET: INGRESS_SECRET }));
  });
  after(async () => {
    await stopStepScene({ s, mailbox }, d);
  });

  test('mail that arrived by mail is a duplicate, its reply joins its conversation, a known contact is reused', async () => {
    // Before the copy: the question arrived by mail, and Cy is a contact without a name.
    for (const raw of [question, shipping]) {
      const ingested = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(SUPPORT)}`, { raw, token: INGRESS_SECRET });
      assert.ok(ingested.status < 300, JSON.stringify(ingested.body));
    }
    const stored = await s.app.db
      .selectFrom('messages')
      .select(['id', 'conversation_id'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('mail_message_id', '=', 'p1@customer.test')
      .executeTakeFirstOrThrow();
    const shippingStored = await s.app.db
      .selectFrom('messages')
      .select(['conversation_id'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('mail_message_id', '=', 's1@customer.test')
      .executeTakeFirstOrThrow();
    const cy = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { emails: ['cy@customer.test'] } });
    assert.equal(cy.status, 201, JSON.stringify(cy.body));

    await scanAndCopy({ s, seed, id, mailbox });

    const items = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['subject', 'status', 'message_id', 'conversation_id'])
      .where('migration_id', '=', id)
      .execute();
    const bySubject = new Map(items.map((i) => [i.subject, i]));
    assert.equal(items.length, 4);
    assert.deepEqual(
      { ...bySubject.get('Invoice') },
      { subject: 'Invoice', status: 'duplicate', message_id: stored.id, conversation_id: stored.conversation_id },
      'the question is the message that arrived by mail',
    );
    assert.equal(bySubject.get('Re: Invoice')?.status, 'copied');
    assert.equal(bySubject.get('Re: Invoice')?.conversation_id, stored.conversation_id, 'the reply joins the conversation of the question');
    assert.equal(bySubject.get('Hello')?.status, 'copied');
    assert.equal(bySubject.get('Re: Shipping')?.status, 'copied');
    assert.equal(
      bySubject.get('Re: Shipping')?.conversation_id,
      shippingStored.conversation_id,
      'a follow-up to mail the old mailbox no longer holds joins its conversation',
    );

    const messages = await s.app.db.selectFrom('messages').select('id').where('workspace_id', '=', seed.workspaceId).where('kind', '=', 'message').execute();
    assert.equal(messages.length, 5, 'the question once, its reply, Shipping and its follow-up, and Cy’s mail');
    const contacts = await s.app.db
      .selectFrom('contact_emails')
      .innerJoin('contacts', 'contacts.id', 'contact_emails.contact_id')
      .select(['contact_emails.email', 'contacts.id', 'contacts.name'])
      .where('contacts.workspace_id', '=', seed.workspaceId)
      .execute();
    assert.deepEqual(contacts.map((c) => c.email).sort(), ['bo@customer.test', 'cy@customer.test'], 'no contact twice');
    const cyContact = contacts.find((c) => c.email === 'cy@customer.test')!;
    assert.equal(cyContact.id, cy.body.id, 'the known contact is reused');
    assert.equal(cyContact.name, 'Cy Known', 'a contact without a name takes the name of the mail');
    const hello = await s.app.db
      .selectFrom('conversations')
      .select('contact_id')
      .where('id', '=', bySubject.get('Hello')!.conversation_id!)
      .executeTakeFirstOrThrow();
    assert.equal(hello.contact_id, cy.body.id);
    const created = await s.app.db.selectFrom('mailbox_migration_contacts').select('contact_id').where('migration_id', '=', id).execute();
    assert.deepEqual(created, [], 'the migration created no contact');
  });
});
