// The copy's memory (issue 19): a source that reads faster than the parser (an export file on
// disk, a FETCH that streams quickly) must not queue a whole batch of raw messages for it. The copy
// reads on only while fewer than PREPARING_BYTES are in hand (read, not yet parsed and stored).
// Checked on a real Dovecot with a slow parser, the result compared to what the mailbox holds.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseMail } from '../../src/mail/parse.js';
import { copyStep, PREPARING_BYTES } from '../../src/mailbox-migration/copy/copy.js';
import type { ReadOnlyMailbox } from '../../src/mailbox-migration/sources/imap.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { expectState, startBulkStepScene, stopStepScene } from '../helpers/migration.js';
import type { TestServer } from '../helpers/server.js';

describe('the copy reads no further ahead of the parser than PREPARING_BYTES', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  let mailbox: ReadOnlyMailbox;
  const now = new Date();
  const clock = new ManualClock(now);
  // 40 messages of about 200 KB: a batch of 8 MB, four times what may be in hand.
  const THREADS = 40;

  before(async () => {
    ({ d, s, seed, id, mailbox } = await startBulkStepScene(clock, { threads: THREADS, perThread: 2, now, attachmentEvery: 1, attachmentBytes: 150_000 }));
    assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
  });
  after(async () => {
    await stopStepScene({ s, mailbox }, d);
  });

  test('a slow parser holds the read back, and every message is still copied once', async () => {
    assert.equal((await s.request('POST', `/v1/migrations/${id}/start`, { token: seed.apiKey })).status, 202);
    const m = await s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    let handed = 0;
    let mostHanded = 0;
    let largest = 0;
    const parse = async (raw: Buffer) => {
      handed += raw.length;
      mostHanded = Math.max(mostHanded, handed);
      largest = Math.max(largest, raw.length);
      await new Promise((r) => setTimeout(r, 20));
      try {
        return await parseMail(raw);
      } finally {
        handed -= raw.length;
      }
    };
    const limits = { batchThreads: 100, batchMessages: 200, batchBytes: 8 * 1024 * 1024 };
    assert.equal(await copyStep(s.app, m, mailbox, { parse, limits }, 60_000), 'done');
    assert.ok(largest > 100_000, `messages of ${largest} bytes`);
    // Without the bound the whole batch (about 6 MB) reached the parser at once.
    assert.ok(mostHanded <= PREPARING_BYTES + largest, `${mostHanded} bytes were handed to the parser at once`);
    assert.ok(mostHanded > largest, 'several messages were parsed at once');
    const messages = await s.app.db
      .selectFrom('messages')
      .select(['mail_message_id'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('kind', '=', 'message')
      .execute();
    assert.equal(messages.length, THREADS * 2);
    assert.equal(new Set(messages.map((x) => x.mail_message_id)).size, THREADS * 2);
    const attachments = await s.app.db.selectFrom('attachments').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(attachments.length, THREADS);
  });
});
