// Gmail labels (X-GM-LABELS): Dovecot cannot serve them, so the mapping is tested on a recorded
// Gmail FETCH response parsed by imapflow itself, and the read-only check is shown to let the item
// through (a real client asks a real server for it; nothing is refused).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parser } from 'imapflow/lib/handler/imap-handler.js';
import { formatMessageResponse } from 'imapflow/lib/tools.js';
import { isGmailDraft, labelsOfGmailLabels, labelsOfItem, planItems, SKIP_REASONS } from '../../src/mailbox-migration/copy/plan.js';
import { chooseFolders } from '../../src/mailbox-migration/copy/scan.js';
import { checkImapCommand, connectReadOnly, type ImapFolder } from '../../src/mailbox-migration/sources/imap.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { buildMail } from '../helpers/mailbox.js';

// As Gmail answers UID FETCH … (UID FLAGS INTERNALDATE RFC822.SIZE BODY.PEEK[HEADER.FIELDS (…)] X-GM-LABELS).
const RECORDED =
  '* 12 FETCH (X-GM-LABELS ("\\\\Important" "\\\\Inbox" "Customers/VIP" Billing) UID 4711 FLAGS (\\Seen) ' +
  'INTERNALDATE "17-Jul-2024 09:12:45 +0000" RFC822.SIZE 2301 BODY[HEADER.FIELDS (MESSAGE-ID)] {39}\r\n' +
  'Message-ID: <vip-1@customer.test>\r\n\r\n\r\n)';

describe('Gmail labels', () => {
  test('a recorded Gmail FETCH response: user labels become labels, system labels do not', async () => {
    const untagged = await parser(Buffer.from(RECORDED));
    const message = (await formatMessageResponse(untagged, {} as Parameters<typeof formatMessageResponse>[1])) as { uid: number; labels?: Set<string> };
    assert.equal(message.uid, 4711);
    const labels = [...(message.labels ?? [])];
    assert.deepEqual(labels, ['\\Important', '\\Inbox', 'Customers/VIP', 'Billing']);
    assert.deepEqual(labelsOfGmailLabels(labels, {}).sort(), ['Billing', 'Customers/VIP']);
    // Mapped like folders: by the label's name; null drops it; a system label may be mapped too.
    assert.deepEqual(labelsOfGmailLabels(labels, { Billing: 'Invoices', 'Customers/VIP': null, '\\Important': 'Priority' }).sort(), ['Invoices', 'Priority']);
  });

  test('All Mail is copied once: a message with labels A and B is one conversation with both labels', () => {
    const item = (key: string, rfc: string, gmail: string[], refs: string[] = []) => ({
      source_key: key,
      folder: '[Gmail]/All Mail',
      uid: Number(key),
      rfc_id: rfc,
      refs,
      sent_at: new Date(Date.UTC(2026, 0, Number(key))).toISOString(),
      size: 1000,
      from_address: 'ada@customer.test',
      recipients: null,
      automatic: false,
      status: 'planned' as const,
      gmail_labels: JSON.stringify(gmail),
    });
    const items = [item('1', 'a@customer.test', ['\\Inbox', 'A', 'B']), item('2', 'b@customer.test', ['A'], ['a@customer.test'])];
    const plan = planItems(items, {
      teamAddresses: new Set(),
      skipAutomatic: true,
      maxMessageBytes: 50 * 1024 * 1024,
      dateFrom: null,
      dateTo: null,
      folderOrder: ['[Gmail]/All Mail'],
    });
    const threads = plan.threads.filter((t) => t.status === 'planned');
    assert.equal(threads.length, 1);
    assert.ok(plan.items.every((p) => p.status === 'planned'));
    const labelOf = new Map([['[Gmail]/All Mail', null]]);
    const labels = new Set(items.flatMap((i) => labelsOfItem(i, labelOf, {})));
    assert.deepEqual([...labels].sort(), ['A', 'B']);
  });

  test('a draft in All Mail (label \\Draft) is skipped with reason draft; the sent message of the same Message-ID is copied', () => {
    const item = (key: string, rfc: string, gmail: string[], refs: string[] = []) => ({
      source_key: key,
      folder: '[Gmail]/All Mail',
      uid: Number(key),
      rfc_id: rfc,
      refs,
      sent_at: new Date(Date.UTC(2026, 0, Number(key))).toISOString(),
      size: 1000,
      from_address: 'ada@customer.test',
      recipients: null,
      automatic: false,
      status: 'planned' as const,
      gmail_labels: JSON.stringify(gmail),
    });
    const items = [
      item('1', 'a@customer.test', ['\\Inbox']),
      item('2', 'draft-only@team.test', ['\\Draft'], ['a@customer.test']),
      // A draft (uid 3, read first) and the message sent from it later share a Message-ID.
      item('3', 'sent@team.test', ['\\Draft', 'Customers']),
      item('4', 'sent@team.test', ['\\Sent', 'Customers']),
      item('5', 'drafty@customer.test', ['Drafts of contracts']),
    ];
    const plan = planItems(items, {
      teamAddresses: new Set(),
      skipAutomatic: true,
      maxMessageBytes: 50 * 1024 * 1024,
      dateFrom: null,
      dateTo: null,
      folderOrder: ['[Gmail]/All Mail'],
    });
    assert.deepEqual(
      plan.items.map((p) => [p.source_key, p.status, p.skip_reason]),
      [
        ['1', 'planned', null],
        ['2', 'skipped', 'draft'],
        ['3', 'skipped', 'draft'],
        ['4', 'planned', null],
        ['5', 'planned', null],
      ],
    );
    assert.match(SKIP_REASONS.draft, /draft/i, 'the dry run explains the reason');
    assert.equal(isGmailDraft({ gmail_labels: null }), false);
    assert.equal(isGmailDraft({ gmail_labels: JSON.stringify(['\\DRAFT']) }), true);
  });

  test('a Google sign-in reads only All Mail (found by \\All, in any language) unless folders are chosen', () => {
    const folder = (path: string, specialUse: string | null): ImapFolder => ({ path, name: path, delimiter: '/', specialUse, noSelect: false });
    const all = [
      folder('INBOX', '\\Inbox'),
      folder('[Google Mail]/Gesendet', '\\Sent'),
      folder('[Google Mail]/Alle Nachrichten', '\\All'),
      folder('Billing', null),
    ];
    assert.deepEqual(
      chooseFolders({ provider: 'google', folders: null }, all).chosen.map((f) => f.path),
      ['[Google Mail]/Alle Nachrichten'],
    );
    assert.deepEqual(
      chooseFolders({ provider: 'gmail', folders: null }, all).chosen.map((f) => f.path),
      ['INBOX', '[Google Mail]/Gesendet'],
      'the app-password preset keeps its folders',
    );
  });

  test('the read-only check allows the X-GM-LABELS FETCH item', () => {
    const items = [
      { type: 'ATOM', value: 'UID' },
      { type: 'ATOM', value: 'FLAGS' },
      { type: 'ATOM', value: 'X-GM-LABELS' },
    ];
    assert.equal(checkImapCommand('UID FETCH', [{ type: 'SEQUENCE', value: '1:10' }, items]), undefined);
    assert.match(
      checkImapCommand('UID STORE', [
        { type: 'SEQUENCE', value: '1' },
        { type: 'ATOM', value: '+X-GM-LABELS' },
      ]) ?? '',
      /not allowed/,
    );
  });
});

describe('X-GM-LABELS through the checked client', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  before(async () => {
    d = await startDovecot();
    d.addUser('gm@example.test', 'pw');
    d.deliver('gm@example.test', 'INBOX', [
      { raw: await buildMail({ from: 'a@customer.test', to: 'gm@example.test', subject: 'Hi', messageId: 'hi@customer.test', date: new Date() }) },
    ]);
  });
  after(async () => d?.stop());

  test('a server with X-GM-EXT-1 is asked for the labels, and the check lets the item through', async () => {
    const mailbox = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: 'gm@example.test', password: 'pw' });
    try {
      // Dovecot does not offer Gmail's extension; the client is told it does, so imapflow asks.
      (mailbox.client.capabilities as Map<string, unknown>).set('X-GM-EXT-1', true);
      await mailbox.examine('INBOX');
      await assert.rejects(async () => {
        for await (const _ of mailbox.headers('1:*', ['message-id'])) void _;
      }, 'Dovecot refuses the item it does not know');
      assert.deepEqual(mailbox.blocked, [], 'the read-only check refused nothing');
    } finally {
      await mailbox.logout();
    }
    assert.ok(
      d.rawlogCommands('gm@example.test').some((l) => /UID FETCH .*X-GM-LABELS/.test(l)),
      'the FETCH with X-GM-LABELS reached the server',
    );
  });
});
