// What an export file may hold, through the API: each kind of export (zip of mbox files, of .eml
// files, of a Maildir tree, a bare mbox), hostile archives refused cleanly with nothing imported,
// what is left out (nested archives, oversize messages), and the whole flow upload → scan → start →
// copy on the file source. Archives are generated here; nothing large is in the repo.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { EXPORT_LIMITS } from '../../src/mailbox-migration/sources/spool.js';
import { mbox, mboxMessage, patchBytes, patchDeclaredSize, sendPart, zipBuffer } from '../helpers/export-files.js';
import { addPerson, type Seed } from '../helpers/fixtures.js';
import { daysAgo } from '../helpers/mailbox.js';
import { expectState } from '../helpers/migration.js';
import type { TestServer } from '../helpers/server.js';
import { SUPPORT, uploadScene } from '../helpers/upload-scene.js';

describe('what an export file holds', () => {
  let s: TestServer;
  let seed: Seed;
  const { now, api, newMigration, uploadDir, uploadExport, mail } = uploadScene((started) => ({ s, seed } = started));

  test('each kind of export: zip of mbox files, of .eml files, of a Maildir tree, and a bare mbox', async () => {
    // A zip of mbox files (mboxrd escaping, Takeout-like common directories).
    const tricky = await mail(1, { text: 'Hello\n\nFrom the start of a line.\n>From quoted once.\nEnd.' });
    const zipOfMbox = await zipBuffer([
      { name: 'Takeout/Mail/Inbox.mbox', data: mbox([tricky, await mail(2)]) },
      { name: 'Takeout/Mail/Sent.mbox', data: mbox([await mail(3, { from: `Support <${SUPPORT}>`, to: 'c1@customer.test' })]) },
      { name: 'Takeout/archive_browser.html', data: '<html></html>' },
    ]);
    let id = await newMigration();
    let r = await uploadExport(s.url, seed.apiKey, id, zipOfMbox);
    assert.equal(r.upload.state, 'read', JSON.stringify(r.upload));
    assert.deepEqual(r.upload.file.contents, ['mbox']);
    assert.deepEqual(
      r.upload.file.folders.map((f: { path: string; messages: number; special_use: string | null }) => [f.path, f.messages, f.special_use]),
      [
        ['INBOX', 2, '\\Inbox'],
        ['Sent', 1, '\\Sent'],
      ],
    );
    assert.deepEqual(r.upload.file.ignored, [{ name: 'Takeout/archive_browser.html', reason: 'not_mail' }]);
    assert.equal((await api('POST', `/v1/migrations/${id}/scan`)).status, 202);
    await s.app.jobs.drain();
    assert.equal((await expectState(s, seed.apiKey, id, 'ready')).plan.summary.total, 3);
    await api('POST', `/v1/migrations/${id}/start`);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'syncing');
    const first = await s.app.db
      .selectFrom('messages')
      .select('body')
      .where('workspace_id', '=', seed.workspaceId)
      .where('mail_message_id', 'like', 'm1-%')
      .executeTakeFirstOrThrow();
    assert.match(first.body ?? '', /\nFrom the start of a line\.\n>From quoted once\.\n/, 'mboxrd escaping undone exactly once');

    // A zip of .eml files in folders.
    const zipOfEml = await zipBuffer([
      { name: 'export/Inbox/1.eml', data: await mail(11) },
      { name: 'export/Inbox/2.eml', data: await mail(12) },
      { name: 'export/Archive/3.eml', data: await mail(13) },
    ]);
    id = await newMigration();
    r = await uploadExport(s.url, seed.apiKey, id, zipOfEml);
    assert.equal(r.upload.state, 'read', JSON.stringify(r.upload));
    assert.deepEqual(r.upload.file.contents, ['eml']);
    assert.deepEqual(
      r.upload.file.folders.map((f: { path: string; messages: number }) => [f.path, f.messages]),
      [
        ['INBOX', 2],
        ['Archive', 1],
      ],
    );

    // A Maildir++ tree: flags from the ":2," suffix, sub-folders from ".Name", tmp/ and metadata ignored.
    const t = Math.floor(daysAgo(now, 3).getTime() / 1000);
    const zipOfMaildir = await zipBuffer([
      { name: 'Maildir/cur/' + `${t}.M1P1.host:2,FS`, data: await mail(21) },
      { name: 'Maildir/new/' + `${t + 1}.M2P1.host`, data: await mail(22) },
      { name: 'Maildir/tmp/' + `${t + 2}.M3P1.host`, data: await mail(23) },
      { name: 'Maildir/dovecot-uidlist', data: '3 V1 N4\n' },
      { name: 'Maildir/.Sent/cur/' + `${t + 3}.M4P1.host:2,RS`, data: await mail(24, { from: `Support <${SUPPORT}>`, to: 'c21@customer.test' }) },
      { name: 'Maildir/.Junk/cur/' + `${t + 4}.M5P1.host:2,S`, data: await mail(25) },
    ]);
    id = await newMigration();
    r = await uploadExport(s.url, seed.apiKey, id, zipOfMaildir);
    assert.equal(r.upload.state, 'read', JSON.stringify(r.upload));
    assert.deepEqual(r.upload.file.contents, ['maildir']);
    assert.deepEqual(
      r.upload.file.folders.map((f: { path: string; messages: number; special_use: string | null }) => [f.path, f.messages, f.special_use]),
      [
        ['INBOX', 2, '\\Inbox'],
        ['Sent', 1, '\\Sent'],
        ['Junk', 1, '\\Junk'],
      ],
    );
    await api('POST', `/v1/migrations/${id}/scan`);
    await s.app.jobs.drain();
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    const folders = Object.fromEntries(ready.plan.summary.folders.map((f: { path: string }) => [f.path, f]));
    assert.equal(folders.Junk?.never_read ?? true, true, 'spam is never read');
    const items = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['folder', 'flags', 'rfc_id'])
      .where('migration_id', '=', id)
      .orderBy('folder')
      .orderBy('uid')
      .execute();
    assert.deepEqual(
      items.map((i) => [i.folder, i.flags ? JSON.parse(i.flags) : []]),
      [
        ['INBOX', ['\\Seen', '\\Flagged']],
        ['INBOX', []],
        ['Sent', ['\\Seen', '\\Answered']],
      ],
    );

    // A bare mbox (not zipped); Status/X-Status headers give the flags.
    const withStatus = (await mail(31)).toString().replace('\r\n\r\n', '\r\nStatus: RO\r\nX-Status: A\r\n\r\n');
    id = await newMigration();
    r = await uploadExport(s.url, seed.apiKey, id, mbox([withStatus, await mail(32)]));
    assert.equal(r.upload.state, 'read', JSON.stringify(r.upload));
    assert.equal(r.upload.file.kind, 'mbox');
    assert.deepEqual(r.upload.file.folders, [{ path: 'INBOX', special_use: '\\Inbox', messages: 2 }]);
    await api('POST', `/v1/migrations/${id}/scan`);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    const bare = await s.app.db.selectFrom('mailbox_migration_items').select(['flags', 'sent_at']).where('migration_id', '=', id).orderBy('uid').execute();
    assert.deepEqual(JSON.parse(bare[0].flags!), ['\\Seen', '\\Answered']);
  });

  test('hostile archives are refused cleanly: the upload ends failed with the cause, nothing kept, nothing imported, the migration stays a draft', async () => {
    const conversationsBefore = await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    const refused = async (file: Buffer, reason: string, message: RegExp) => {
      const id = await newMigration();
      const r = await uploadExport(s.url, seed.apiKey, id, file);
      assert.equal(r.completed.status, 202, JSON.stringify(r.completed.body));
      assert.equal(r.upload.state, 'failed', JSON.stringify(r.upload));
      assert.equal(r.upload.processing.error.code, 'invalid_request');
      assert.equal(r.upload.processing.error.reason, reason);
      assert.match(r.upload.processing.error.message, message);
      await expectState(s, seed.apiKey, id, 'draft');
      assert.ok(!fs.existsSync(uploadDir(id)), 'nothing of a refused file is kept');
      const held = await api('GET', `/v1/migrations/${id}/upload`);
      assert.deepEqual(held.body.data, []);
      assert.equal(held.body.file, null);
      assert.equal(held.body.processing.error.reason, reason, 'the cause stays shown until a new upload begins');
      const log = await s.app.db
        .selectFrom('mailbox_migration_log')
        .select('detail')
        .where('migration_id', '=', id)
        .where('action', '=', 'upload_refused')
        .execute();
      assert.equal(log.length, 1);
      assert.equal(JSON.parse(log[0].detail!).reason, reason);
      // A new upload begins from part 1: the refusal is no longer the upload's state.
      assert.equal((await sendPart(s.url, seed.apiKey, id, 1, Buffer.from(mboxMessage(ok)))).status, 200);
      const again = await api('GET', `/v1/migrations/${id}/upload`);
      assert.equal(again.body.state, 'receiving');
      assert.equal(again.body.processing, null);
      return id;
    };
    const ok = await mail(41);
    // A zip bomb: 20 MiB of zeros in a few kilobytes.
    await refused(
      await zipBuffer([{ name: 'a.mbox', data: Buffer.concat([Buffer.from(mboxMessage(ok)), Buffer.alloc(20 * 1024 * 1024)]) }]),
      'compression_ratio',
      /zip bomb/,
    );
    // A bomb with a lying header: it declares 2 KB and inflates to 5 MiB.
    const liar = await zipBuffer([{ name: 'b.mbox', data: Buffer.concat([Buffer.from(mboxMessage(ok)), Buffer.alloc(5 * 1024 * 1024, 0x41)]) }]);
    await refused(patchDeclaredSize(liar, 'b.mbox', 2048), 'compression_ratio', /more than the 2048 bytes it declares/);
    // Names that climb out, are absolute, or carry backslashes.
    const named = (name: string) =>
      zipBuffer([
        { name: 'fine.eml', data: ok },
        { name, data: ok },
      ]);
    await refused(patchBytes(await named('QQ/evil.eml'), 'QQ/evil', '../evil'), 'unsafe_name', /contains \.\./);
    await refused(patchBytes(await named('Qetc/x.eml'), 'Qetc/', '/etc/'), 'unsafe_name', /absolute path/);
    await refused(patchBytes(await named('dirQx.eml'), 'dirQx', 'dir\\x'), 'unsafe_name', /backslash/);
    // A truncated zip (cut before its table of contents) and something that is no export at all.
    const whole = await zipBuffer([{ name: 'c.mbox', data: mbox([ok, await mail(42)]) }]);
    await refused(whole.subarray(0, whole.length - 30), 'damaged', /damaged or incomplete/);
    await refused(Buffer.from('%PDF-1.7 not mail'), 'not_an_export', /neither a zip archive nor an mbox/);
    // The entry count and the total size are capped (the caps made small here; they are 200,000 and 64 GiB).
    const limits = { ...EXPORT_LIMITS };
    try {
      EXPORT_LIMITS.maxEntries = 5;
      await refused(await zipBuffer(Array.from({ length: 6 }, (_, i) => ({ name: `m${i}.eml`, data: ok }))), 'too_many_entries', /holds 6 entries; at most 5/);
      EXPORT_LIMITS.maxEntries = limits.maxEntries;
      EXPORT_LIMITS.maxTotalBytes = ok.length * 2;
      await refused(await zipBuffer(Array.from({ length: 3 }, (_, i) => ({ name: `m${i}.eml`, data: ok }))), 'too_large', /uncompressed bytes/);
    } finally {
      Object.assign(EXPORT_LIMITS, limits);
    }
    const after = await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(after.length, conversationsBefore.length, 'nothing imported');
    assert.equal(s.logs.filter((l) => l.level === 'error').length, 0);
  });

  test('a nested zip is not opened, and a 51 MiB message is not copied (only its headers are read)', async () => {
    const inner = await zipBuffer([{ name: 'inner.eml', data: await mail(51) }]);
    const bigId = `big-${crypto.randomBytes(4).toString('hex')}@customer.test`;
    const head = (await mail(52, { messageId: bigId, subject: 'Huge' })).toString().split('\r\n\r\n')[0];
    // 51 MiB of random base64 lines, generated as a stream and stored uncompressed.
    const bigStream = () =>
      Readable.from(
        (function* () {
          yield Buffer.from(`${head}\r\n\r\n`);
          for (let i = 0; i < 51; i++)
            yield Buffer.from(
              crypto
                .randomBytes(768 * 1024)
                .toString('base64')
                .replace(/(.{76})/g, '$1\r\n'),
            );
        })(),
      );
    const zip = await zipBuffer([
      { name: 'mail/inside.zip', data: inner, compress: false },
      { name: 'mail/hidden.mbox', data: inner, compress: false },
      { name: 'mail/big.eml', data: bigStream, compress: false },
      { name: 'mail/small.eml', data: await mail(53, { subject: 'Small one' }) },
    ]);
    const id = await newMigration();
    const r = await uploadExport(s.url, seed.apiKey, id, zip);
    assert.equal(r.upload.state, 'read', JSON.stringify(r.upload));
    assert.equal(r.upload.file.messages, 2);
    assert.equal(r.upload.file.oversize_messages, 1);
    assert.deepEqual(r.upload.file.ignored, [
      { name: 'mail/inside.zip', reason: 'nested_archive' },
      { name: 'mail/hidden.mbox', reason: 'nested_archive' },
    ]);
    const spool = fs.statSync(path.join(uploadDir(id), 'read', 'messages')).size;
    assert.ok(spool < 1024 * 1024, `the oversize message is not kept whole (${spool} bytes spooled)`);
    await api('POST', `/v1/migrations/${id}/scan`);
    await s.app.jobs.drain();
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    assert.deepEqual(ready.plan.summary.skipped, { too_large: 1 });
    assert.match(ready.plan.summary.skip_reasons.too_large, /SVC_MIGRATION_MAX_MESSAGE_BYTES/);
    await api('POST', `/v1/migrations/${id}/start`);
    await s.app.jobs.drain();
    const done = await expectState(s, seed.apiKey, id, 'syncing');
    assert.equal(done.progress.copied, 1);
    const huge = await s.app.db.selectFrom('messages').select('id').where('workspace_id', '=', seed.workspaceId).where('mail_message_id', '=', bigId).execute();
    assert.equal(huge.length, 0, 'the 51 MiB message is not imported');
    const inside = await s.app.db
      .selectFrom('messages')
      .select('id')
      .where('workspace_id', '=', seed.workspaceId)
      .where('subject', '=', 'Question 51')
      .execute();
    assert.equal(inside.length, 0, 'nothing of the nested zip is imported');
  });

  test('upload → scan → preview → start → copy on the file source: threads, directions, quiet history', async () => {
    const owner = (await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
    const q1 = `q1-${crypto.randomBytes(4).toString('hex')}@customer.test`;
    const a1 = `a1-${crypto.randomBytes(4).toString('hex')}@acme.test`;
    const q2 = `q2-${crypto.randomBytes(4).toString('hex')}@customer.test`;
    const zip = await zipBuffer([
      {
        name: 'Inbox.mbox',
        data: mbox([
          await mail(61, { messageId: q1, subject: 'Broken widget', days: 30 }),
          await mail(62, { messageId: q2, subject: 'Re: Broken widget', inReplyTo: a1, days: 2 }),
        ]),
      },
      {
        name: 'Sent.mbox',
        data: mbox([
          await mail(63, { from: `Owner <${owner}>`, to: 'c61@customer.test', messageId: a1, subject: 'Re: Broken widget', inReplyTo: q1, days: 29 }),
        ]),
      },
    ]);
    const id = await newMigration();
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await sendPart(s.url, agent.token, id, 1, zip)).status, 403, 'agents may not upload');
    const r = await uploadExport(s.url, seed.apiKey, id, zip);
    assert.equal(r.upload.state, 'read');
    assert.deepEqual(r.migration.allowed_actions, ['update', 'delete', 'scan', 'cancel']);
    await api('POST', `/v1/migrations/${id}/scan`);
    await s.app.jobs.drain();
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    assert.equal(ready.plan.summary.total, 3);
    assert.equal(ready.plan.summary.conversations, 1);
    const preview = await api('GET', `/v1/migrations/${id}/preview`);
    assert.equal(preview.body.data[0].subject, 'Broken widget');
    assert.deepEqual(
      preview.body.data[0].messages.map((m: { direction: string }) => m.direction),
      ['in', 'out', 'in'],
    );
    assert.equal(preview.body.data[0].messages[1].author_member_id, seed.ownerId);
    const before = await s.app.db
      .selectFrom('events')
      .select('seq')
      .where('workspace_id', '=', seed.workspaceId)
      .where('type', 'like', 'conversation.%')
      .execute();
    await api('POST', `/v1/migrations/${id}/start`);
    await s.app.jobs.drain();
    const done = await expectState(s, seed.apiKey, id, 'syncing');
    assert.equal(done.progress.copied, 3);
    const conv = await s.app.db
      .selectFrom('conversations')
      .selectAll()
      .where('workspace_id', '=', seed.workspaceId)
      .where('subject', '=', 'Broken widget')
      .executeTakeFirstOrThrow();
    assert.equal(conv.imported, 1);
    assert.equal(conv.status, 'open', 'the customer wrote last, two days ago');
    const msgs = await s.app.db
      .selectFrom('messages')
      .select(['kind', 'direction', 'author_person_id'])
      .where('conversation_id', '=', conv.id)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      msgs.map((m) => `${m.kind}:${m.direction}`),
      ['message:in', 'message:out', 'message:in', 'event:out'],
    );
    assert.equal(msgs[1].author_person_id, seed.ownerId);
    const after = await s.app.db
      .selectFrom('events')
      .select('seq')
      .where('workspace_id', '=', seed.workspaceId)
      .where('type', 'like', 'conversation.%')
      .execute();
    assert.equal(after.length, before.length, 'imported history makes no conversation events');
    // Running the copy again (retry, a restart) never duplicates a message.
    await api('POST', `/v1/migrations/${id}/retry`);
    await s.app.jobs.drain();
    const again = await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', conv.id).execute();
    assert.equal(again.length, 4);
  });
});
