// The read-only guarantee at the wire, against a real Dovecot: only allowed commands reach the
// server (its own rawlog is the witness), nothing on disk changes, and a forbidden command is
// refused before it is sent, with the connection closed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ALLOWED_COMMANDS, checkImapCommand, classifyImapError, connectReadOnly, ReadOnlyViolation } from '../../src/mailbox-migration/sources/imap.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { buildMail, newMessageId } from '../helpers/mailbox.js';

const USER = 'box@acme.test';
const PASSWORD = 'app-password-1';

/** Command names (and FETCH items) Dovecot recorded, from "<time> <tag> <COMMAND> …" lines. */
function commandsIn(lines: string[]): { name: string; line: string }[] {
  return lines
    .map((line) => /^\d+\.\d+ (\S+) (UID \S+|\S+)/.exec(line))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ name: m[2].toUpperCase(), line: m[0] + m.input.slice(m[0].length) }));
}

async function rawlogSettled(d: Dovecot, predicate: (lines: string[]) => boolean): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const lines = d.rawlogCommands(USER);
    if (predicate(lines)) return lines;
    await sleep(50);
  }
  return d.rawlogCommands(USER);
}

describe('read-only IMAP client', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  const ids = [newMessageId(), newMessageId(), newMessageId()];

  before(async () => {
    d = await startDovecot();
    d.addUser(USER, PASSWORD);
    const now = new Date();
    d.deliver(USER, 'INBOX', [
      { raw: await buildMail({ from: 'Ada <ada@customer.test>', to: USER, subject: 'Unread one', messageId: ids[0], date: now }), isNew: true },
      { raw: await buildMail({ from: 'Bob <bob@customer.test>', to: USER, subject: 'Seen one', messageId: ids[1], date: now }), flags: 'S' },
      { raw: await buildMail({ from: 'Cy <cy@customer.test>', to: USER, subject: 'Flagged', messageId: ids[2], date: now }), flags: 'F' },
    ]);
    d.deliver(USER, 'Sent', [
      { raw: await buildMail({ from: USER, to: 'ada@customer.test', subject: 'Re: Unread one', inReplyTo: ids[0], date: now }), flags: 'S' },
    ]);
    d.deliver(USER, 'Junk', [{ raw: await buildMail({ from: 'spam@spam.test', to: USER, subject: 'Win', date: now }) }]);
  });
  after(() => d?.stop());

  test('the check: allowed commands and non-marking FETCH items pass, everything else is refused', () => {
    for (const c of ALLOWED_COMMANDS) if (c !== 'FETCH') assert.equal(checkImapCommand(c, []), undefined, c);
    assert.equal(checkImapCommand('UID SEARCH', []), undefined);
    for (const c of [
      'SELECT',
      'STORE',
      'UID STORE',
      'COPY',
      'UID COPY',
      'MOVE',
      'UID MOVE',
      'EXPUNGE',
      'UID EXPUNGE',
      'APPEND',
      'CREATE',
      'DELETE',
      'RENAME',
      'SUBSCRIBE',
      'UNSUBSCRIBE',
      'CLOSE',
      'IDLE',
      'ENABLE',
      'COMPRESS',
      'ID',
      'NAMESPACE',
      'LSUB',
      'XLIST',
      'SETACL',
      'SETMETADATA',
      'SETQUOTA',
      'GETQUOTA',
      'X-CUSTOM',
    ]) {
      assert.ok(checkImapCommand(c, []), `${c} must be refused`);
    }
    const seq = { type: 'SEQUENCE', value: '1:*' };
    const atom = (value: string, section?: unknown) => ({ type: 'ATOM', value, ...(section ? { section } : {}) });
    const header = [{ type: 'ATOM', value: 'HEADER.FIELDS' }, [{ type: 'ATOM', value: 'SUBJECT' }]];
    assert.equal(
      checkImapCommand('UID FETCH', [
        seq,
        [atom('UID'), atom('FLAGS'), atom('RFC822.SIZE'), atom('INTERNALDATE'), atom('BODY.PEEK', header), atom('ENVELOPE'), atom('BODYSTRUCTURE')],
      ]),
      undefined,
    );
    assert.equal(checkImapCommand('FETCH', [seq, atom('BODY.PEEK', [])]), undefined);
    assert.equal(checkImapCommand('FETCH', [seq, atom('BINARY.PEEK', [atom('1')])]), undefined);
    assert.equal(checkImapCommand('UID FETCH', [seq, [atom('UID'), atom('FLAGS')], [atom('CHANGEDSINCE'), atom('5')]]), undefined);
    assert.match(checkImapCommand('FETCH', [seq, atom('BODY', [])])!, /BODY/);
    assert.match(checkImapCommand('UID FETCH', [seq, [atom('UID'), atom('BODY', [atom('TEXT')])]])!, /BODY/);
    assert.match(checkImapCommand('FETCH', [seq, atom('BINARY', [atom('1')])])!, /BINARY/);
    assert.match(checkImapCommand('FETCH', [seq, atom('RFC822')])!, /RFC822/);
    assert.match(checkImapCommand('FETCH', [seq, atom('RFC822.TEXT')])!, /RFC822\.TEXT/);
    assert.match(checkImapCommand('FETCH', [seq, [atom('UID'), atom('BODY[]')]])!, /BODY\[\]/);
    assert.match(checkImapCommand('FETCH', [seq, [atom('UID')], [atom('X-MARK')]])!, /modifier/);
    assert.match(checkImapCommand('FETCH', [seq])!, /without items/);
  });

  test('reading the mailbox sends only allowed commands and changes nothing on disk', async () => {
    const before = d.snapshot(USER);
    const flagsBefore = d.doveadm(['fetch', '-u', USER, 'uid flags', 'mailbox', 'INBOX', 'all']);
    const mailbox = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: USER, password: PASSWORD });
    const folders = await mailbox.folders();
    const special = Object.fromEntries(folders.map((f) => [f.path, f.specialUse]));
    assert.equal(special.Junk, '\\Junk');
    assert.equal(special.Trash, '\\Trash');
    assert.equal(special.Drafts, '\\Drafts');
    assert.equal(special.Sent, '\\Sent');
    assert.equal(special.INBOX, '\\Inbox');
    const box = await mailbox.examine('INBOX');
    assert.equal(box.exists, 3);
    assert.match(box.uidValidity, /^\d+$/);
    const headers = [];
    for await (const h of mailbox.headers('1:*', ['message-id', 'subject'])) headers.push(h);
    assert.equal(headers.length, 3);
    assert.ok(headers.some((h) => h.headers.toString().includes(ids[0])));
    const sources = [];
    for await (const s of mailbox.sources(headers.map((h) => h.uid))) sources.push(s);
    assert.equal(sources.length, 3);
    assert.ok(sources.every((s) => s.source.toString().includes('Message-ID')));
    await mailbox.status('Sent');
    await mailbox.examine('Sent');
    assert.deepEqual(await mailbox.uids(), [1]);
    await mailbox.logout();

    assert.deepEqual([...d.snapshot(USER)].sort(), [...before].sort(), 'Maildir file names (flags) and new/ are untouched');
    assert.equal(d.doveadm(['fetch', '-u', USER, 'uid flags', 'mailbox', 'INBOX', 'all']), flagsBefore, 'no flag changed (no \\Seen was added)');
    const lines = await rawlogSettled(d, (l) => l.some((x) => / LOGOUT/.test(x)));
    const commands = commandsIn(lines);
    assert.ok(commands.length >= 6, 'the rawlog holds the session');
    for (const c of commands) {
      const name = c.name.startsWith('UID ') ? c.name.slice(4) : c.name;
      assert.ok(ALLOWED_COMMANDS.has(name), `Dovecot received ${c.line}`);
      if (name === 'FETCH') {
        assert.doesNotMatch(c.line, /\bBODY\[|\bBINARY\[|\bRFC822(?!\.SIZE|\.HEADER)\b/i, c.line);
      }
    }
    for (const name of ['ID', 'ENABLE', 'COMPRESS', 'IDLE', 'SELECT', 'NAMESPACE', 'LSUB', 'XLIST']) {
      assert.ok(!commands.some((c) => c.name === name), `${name} was switched off`);
    }
    assert.ok(commands.some((c) => c.name === 'EXAMINE'));
    assert.ok(!lines.some((l) => / EXAMINE "?Junk/.test(l)), 'spam is never opened');
  });

  test('a forbidden command is refused before it is sent, the connection closed, and it is recorded', async () => {
    const flagsBefore = d.doveadm(['fetch', '-u', USER, 'uid flags', 'mailbox', 'INBOX', 'all']);
    const snapshot = d.snapshot(USER);
    const startLines = d.rawlogCommands(USER).length;
    const blocked: string[] = [];

    // A flag change (as a bug might make one): imapflow builds STORE, the check stops it.
    const a = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: USER, password: PASSWORD, onBlocked: (b) => blocked.push(b.command) });
    await a.examine('INBOX');
    // imapflow drops flags the read-only folder does not allow before it builds the command; pretend it allows them.
    (a.client.mailbox as unknown as { permanentFlags: Set<string> }).permanentFlags = new Set(['\\*']);
    // (imapflow reports a failed STORE as false; the refusal itself is what the wrapper records.)
    assert.equal(await a.client.messageFlagsAdd('1:*', ['\\Seen'], { uid: true }), false);
    assert.equal(a.usable, false, 'the connection is closed');
    assert.deepEqual(blocked, ['UID STORE']);
    assert.equal(classifyImapError(a.blocked.length ? new ReadOnlyViolation(a.blocked[0].command, a.blocked[0].reason) : null), 'read_only');
    await assert.rejects(a.examine('Sent'), ReadOnlyViolation, 'nothing more is sent on it');

    // Opening a folder read-write, creating one, fetching with BODY[] (marks as read).
    const b = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: USER, password: PASSWORD, onBlocked: (x) => blocked.push(x.command) });
    await assert.rejects(b.client.mailboxOpen('INBOX'));
    const c = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: USER, password: PASSWORD, onBlocked: (x) => blocked.push(x.command) });
    await assert.rejects(c.client.mailboxCreate('Evil'));
    const e = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: USER, password: PASSWORD, onBlocked: (x) => blocked.push(x.command) });
    await e.examine('INBOX');
    const exec = (e.client as unknown as { exec(cmd: string, attrs: unknown[]): Promise<unknown> }).exec.bind(e.client);
    await assert.rejects(
      exec('UID FETCH', [
        { type: 'SEQUENCE', value: '1:*' },
        { type: 'ATOM', value: 'BODY', section: [] },
      ]),
    );
    assert.deepEqual(blocked, ['UID STORE', 'SELECT', 'CREATE', 'UID FETCH']);
    // imapflow's own LSUB (after a LIST) is switched off: a fresh connection opens a folder with LIST and EXAMINE only.
    const f = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: USER, password: PASSWORD, onBlocked: (x) => blocked.push(x.command) });
    await f.examine('Sent');
    await f.logout();
    assert.equal(blocked.length, 4);
    for (const x of [b, c, e]) assert.equal(x.usable, false);

    await sleep(300);
    const lines = d.rawlogCommands(USER).slice(startLines);
    assert.ok(!lines.some((l) => /STORE|SELECT|CREATE|BODY\[/.test(l)), `nothing forbidden reached Dovecot:\n${lines.join('\n')}`);
    assert.equal(d.doveadm(['fetch', '-u', USER, 'uid flags', 'mailbox', 'INBOX', 'all']), flagsBefore);
    assert.deepEqual([...d.snapshot(USER)].sort(), [...snapshot].sort());
    assert.ok(!d.doveadm(['mailbox', 'list', '-u', USER]).includes('Evil'));
  });

  test('a refused password and an unreachable server are told apart', async () => {
    await assert.rejects(
      connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: USER, password: 'wrong' }),
      (e: unknown) => classifyImapError(e) === 'login',
    );
    await assert.rejects(
      connectReadOnly({ address: '127.0.0.1', port: 1, tls: 'none', user: USER, password: PASSWORD, connectTimeoutMs: 3000 }),
      (e: unknown) => classifyImapError(e) === 'connect',
    );
  });
});

// The command check on its own (no server needed): the shapes a careless change would let through.
describe('the read-only command check, edge by edge', () => {
  const seq = { type: 'SEQUENCE', value: '1:*' };
  const atom = (value: string, section?: unknown) => ({ type: 'ATOM', value, ...(section ? { section } : {}) });

  test('a command is one name (UID and FETCH or SEARCH at most), in any case', () => {
    assert.equal(checkImapCommand('uid search', []), undefined, 'names are compared in upper case');
    assert.equal(checkImapCommand('  NOOP  ', []), undefined, 'surrounding spaces are not part of the name');
    for (const c of ['EXAMINE INBOX', 'FETCH 1:* BODY[]', 'UID FETCH 1 BODY[]', 'UID', 'UID UID', ''])
      assert.ok(checkImapCommand(c, []), `${JSON.stringify(c)} must be refused`);
    for (const c of [undefined, null, 42, ['FETCH']]) assert.ok(checkImapCommand(c, []), `${JSON.stringify(c)} must be refused`);
    assert.equal(checkImapCommand('UID \t SEARCH', []), undefined, 'any run of spaces separates the two words');
    // UID goes only with FETCH and SEARCH, even before a command that is allowed on its own.
    for (const c of ['UID EXAMINE', 'UID LIST', 'UID NOOP', 'UID LOGOUT']) assert.match(checkImapCommand(c, [])!, new RegExp(`^command ${c} is not allowed$`));
    assert.equal(checkImapCommand('UID', []), 'command UID  is not allowed', 'the refusal names what was sent, nothing more');
    assert.equal(checkImapCommand('store', []), 'command STORE is not allowed on a read-only connection');
  });

  test('FETCH items: a list with something in it, plain names only, sections only on the .PEEK forms', () => {
    assert.match(checkImapCommand('FETCH', [seq, []])!, /without items/);
    assert.match(checkImapCommand('FETCH', 'not a list')!, /without items/);
    assert.match(checkImapCommand('FETCH', [seq, [[atom('UID')]]])!, /not a plain name/);
    assert.match(checkImapCommand('FETCH', [seq, [{ type: 'ATOM' }]])!, /not a plain name/);
    assert.match(checkImapCommand('FETCH', [seq, null])!, /not a plain name/);
    assert.equal(checkImapCommand('FETCH', [seq, atom('body.peek', [])]), undefined, 'item names in any case');
    assert.match(checkImapCommand('FETCH', [seq, atom('FLAGS', [])])!, /FLAGS\[…\] is not allowed/);
    assert.match(checkImapCommand('FETCH', [seq, atom('RFC822.HEADER', [])])!, /RFC822\.HEADER\[…\] is not allowed/);
    assert.equal(checkImapCommand('FETCH', [seq, atom('BINARY.SIZE', [atom('1')])]), undefined);
  });

  test('FETCH modifiers: CHANGEDSINCE and VANISHED only, each a list starting with its name', () => {
    assert.equal(checkImapCommand('UID FETCH', [seq, [atom('UID')], [atom('changedsince'), atom('5')], atom('VANISHED')]), undefined);
    assert.match(checkImapCommand('FETCH', [seq, [atom('UID')], []])!, /modifier \?/);
    assert.match(checkImapCommand('FETCH', [seq, [atom('UID')], [atom('CHANGEDSINCE'), atom('5')], [atom('MARK')]])!, /modifier MARK/);
  });
});
