// FolderConnections against a real Dovecot: reading INBOX and Sent in turn (what every copy batch
// does) opens each folder once, on its own connection; a server that allows one connection per
// user gets the folders switched on the first one, and every message is still read.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectReadOnly } from '../../src/mailbox-migration/sources/imap.js';
import { FolderConnections } from '../../src/mailbox-migration/sources/imap-folders.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { buildMail, newMessageId } from '../helpers/mailbox.js';

const USER = 'box@acme.test';
const PASSWORD = 'app-password-1';

async function withMailbox(d: Dovecot): Promise<void> {
  d.addUser(USER, PASSWORD);
  const date = new Date();
  const ids = [newMessageId(), newMessageId()];
  d.deliver(USER, 'INBOX', [
    { raw: await buildMail({ from: 'ada@customer.test', to: USER, subject: 'One', messageId: ids[0], date }), flags: 'S' },
    { raw: await buildMail({ from: 'bob@customer.test', to: USER, subject: 'Two', messageId: ids[1], date }), flags: 'S' },
  ]);
  d.deliver(USER, 'Sent', [{ raw: await buildMail({ from: USER, to: 'ada@customer.test', subject: 'Re: One', inReplyTo: ids[0], date }), flags: 'S' }]);
}

/** Reads every message of INBOX, then of Sent, `rounds` times over; returns the subjects read. */
async function readInTurn(source: FolderConnections, rounds: number): Promise<string[]> {
  const subjects: string[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const folder of ['INBOX', 'Sent']) {
      await source.examine(folder);
      for await (const { source: raw } of source.sources(await source.uids())) subjects.push(/^Subject: (.*)$/m.exec(raw.toString())![1].trim());
    }
  }
  return subjects;
}

/** EXAMINE lines Dovecot recorded, once its rawlog has them all. */
async function examines(d: Dovecot, expected: number): Promise<string[]> {
  let found: string[] = [];
  for (let i = 0; i < 100; i++) {
    found = d.rawlogCommands(USER).filter((line) => /^\d+\.\d+ \S+ EXAMINE /i.test(line));
    if (found.length >= expected) break;
    await sleep(50);
  }
  return found;
}

const connect = (d: Dovecot) => () => connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: USER, password: PASSWORD });

describe('one IMAP connection per folder', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  before(async () => {
    d = await startDovecot();
    await withMailbox(d);
  });
  after(() => d?.stop());

  test('INBOX and Sent read in turn: each folder is examined once, on a second connection opened for it', async () => {
    const source = new FolderConnections(await connect(d)(), connect(d));
    try {
      const subjects = await readInTurn(source, 3);
      assert.deepEqual(subjects, Array.from({ length: 3 }, () => ['One', 'Two', 'Re: One']).flat());
      assert.equal(source.connections, 2);
      assert.ok(source.usable);
      const lines = await examines(d, 2);
      // One EXAMINE per folder (the rawlog holds a file per connection, so no order across them).
      assert.deepEqual(lines.map((l) => l.split(' ').slice(3).join(' ')).sort(), ['INBOX', 'Sent']);
    } finally {
      await source.logout();
    }
  });
});

describe('one IMAP connection per folder, on a server that allows one connection', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  before(async () => {
    d = await startDovecot({ maxUserIpConnections: 1 });
    await withMailbox(d);
  });
  after(() => d?.stop());

  test('the second connection is refused: the first one switches folders and every message is read', async () => {
    let attempts = 0;
    const source = new FolderConnections(await connect(d)(), () => {
      attempts++;
      return connect(d)();
    });
    try {
      const subjects = await readInTurn(source, 2);
      assert.deepEqual(subjects, ['One', 'Two', 'Re: One', 'One', 'Two', 'Re: One']);
      assert.equal(source.connections, 1);
      assert.equal(attempts, 1, 'a refused connection is not tried again');
      assert.ok(source.usable);
      assert.equal((await examines(d, 4)).length, 4);
    } finally {
      await source.logout();
    }
  });
});
