// What the export-file upload tests (test/mailbox-migration/upload-processing, export-contents) start
// from, one per test file: a real server whose jobs run only when a test drains them, a workspace
// whose Support inbox has the e-mail channel SUPPORT, and the helpers to make an export-file migration,
// upload to it, and write the mail that goes into the files.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { after, before } from 'node:test';
import { ManualClock } from '../../src/platform/clock.js';
import { awaitProcessed, uploadExport as uploadInParts } from './export-files.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { seedEmailChannel } from './mail.js';
import { buildMail, daysAgo } from './mailbox.js';
import { startTestServer, type TestServer } from './server.js';

export const SUPPORT = 'help@acme.test';

/**
 * Call inside a `describe`: starts the server before its tests (handing it and the workspace to
 * `onStart`) and stops it after.
 */
export function uploadScene(onStart: (started: { s: TestServer; seed: Seed }) => void) {
  const now = new Date();
  const clock = new ManualClock(now);
  let s: TestServer;
  let seed: Seed;
  let channelId: string;
  before(async () => {
    s = await startTestServer({ clock });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    channelId = (await seedEmailChannel(s.app, seed, { address: SUPPORT })).id;
    onStart({ s, seed });
  });
  after(async () => {
    await s?.stop();
  });

  const api = (method: string, p: string, body?: unknown, token = seed.apiKey) => s.request(method, p, { token, body });
  const newMigration = async () => {
    const r = await api('POST', '/v1/migrations', { provider: 'export_file', inbox_id: seed.inboxId, channel_id: channelId });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.ok(r.body.allowed_actions.includes('upload'));
    assert.ok(!r.body.allowed_actions.includes('credentials'));
    return r.body.id as string;
  };
  const uploadDir = (id: string) => path.join(s.app.config.dataDir, 'migration-uploads', id);
  const complete = (id: string, body?: unknown) => api('POST', `/v1/migrations/${id}/upload/complete`, body);
  const settle = () => s.app.jobs.drain();
  const processed = (id: string) => awaitProcessed(s.url, seed.apiKey, id, { settle });
  const uploadExport = (url: string, token: string, id: string, file: Buffer) => uploadInParts(url, token, id, file, { settle });

  const mail = (n: number, opts: { from?: string; to?: string; subject?: string; text?: string; messageId?: string; inReplyTo?: string; days?: number } = {}) =>
    buildMail({
      from: opts.from ?? `Customer ${n} <c${n}@customer.test>`,
      to: opts.to ?? SUPPORT,
      subject: opts.subject ?? `Question ${n}`,
      messageId: opts.messageId ?? `m${n}-${crypto.randomBytes(4).toString('hex')}@customer.test`,
      inReplyTo: opts.inReplyTo,
      references: opts.inReplyTo ? [opts.inReplyTo] : undefined,
      date: daysAgo(now, opts.days ?? n),
      text: opts.text ?? `Body of message ${n}.`,
    });

  return { now, clock, api, newMigration, uploadDir, complete, processed, uploadExport, mail };
}
