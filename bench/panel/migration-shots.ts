// The migration wizard's pages for bench/panel/screenshots.ts: migrations of a throwaway Dovecot
// mailbox brought through the API to the state of each step (draft, connected, ready, copying,
// paused, syncing, completed). Without Dovecot only the Source step and the list are shown. The
// background work is stopped while they are made and started again afterwards.
import { type Dovecot, dovecotMissing, startDovecot } from '../../test/helpers/dovecot.js';
import type { Seed } from '../../test/helpers/fixtures.js';
import { seedEmailChannel } from '../../test/helpers/mail.js';
import { fillBulkMailbox, fillOldMailbox, SUPPORT, SUPPORT_PASSWORD } from '../../test/helpers/migration.js';
import type { TestServer } from '../../test/helpers/server.js';

interface MigrationShots {
  /** [path on the server, screenshot name] */
  pages: [string, string][];
  stop(): Promise<void>;
}

export async function prepareMigrationShots(s: TestServer, seed: Seed, ownerEmail: string): Promise<MigrationShots> {
  const pages: [string, string][] = [['/settings/migrations/new', 'migration-1-source']];
  if (dovecotMissing) {
    console.warn(`migration wizard screenshots: ${dovecotMissing}`);
    return { pages: [...pages, ['/settings/migrations', 'migration-list']], stop: async () => {} };
  }
  const d: Dovecot = await startDovecot();
  d.addUser(SUPPORT, SUPPORT_PASSWORD);
  await fillOldMailbox(d, new Date(), { ownerEmail, bigBytes: 1000 });
  // The completed migration reads a mailbox of its own, so its messages are not duplicates of the others'.
  const HELP = 'help@acme.test';
  d.addUser(HELP, SUPPORT_PASSWORD);
  await fillBulkMailbox(d, HELP, { threads: 12, perThread: 3, now: new Date() });
  s.app.resolveMx = async () => [];
  await s.app.jobs.stop();
  const channel = await seedEmailChannel(s.app, seed, { address: SUPPORT });
  const helpChannel = await seedEmailChannel(s.app, seed, { address: 'help@acme.test' });
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await s.request(method, path, { token: seed.apiKey, body });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const migration = async (to: 'draft' | 'connected' | 'ready' | 'paused' | 'syncing' | 'completed') => {
    const [user, channelId] = to === 'completed' ? [HELP, helpChannel.id] : [SUPPORT, channel.id];
    const m = await api('POST', '/v1/migrations', {
      provider: 'imap',
      source_address: user,
      imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
      inbox_id: seed.inboxId,
      channel_id: channelId,
    });
    if (to === 'draft') return m.id as string;
    await api('PUT', `/v1/migrations/${m.id}/credentials`, { password: SUPPORT_PASSWORD });
    await api('POST', `/v1/migrations/${m.id}/test`);
    if (to === 'connected') return m.id as string;
    if (user === SUPPORT) await api('PATCH', `/v1/migrations/${m.id}`, { folders: ['INBOX', 'Sent', 'Archive'], folder_labels: { Archive: 'archived' } });
    await api('POST', `/v1/migrations/${m.id}/scan`);
    await s.app.jobs.drain();
    if (to === 'ready') return m.id as string;
    await api('POST', `/v1/migrations/${m.id}/start`);
    if (to === 'paused') {
      await api('POST', `/v1/migrations/${m.id}/pause`);
      return m.id as string;
    }
    await s.app.jobs.drain();
    if (to === 'syncing') return m.id as string;
    await api('POST', `/v1/migrations/${m.id}/finish`, { force: true });
    return m.id as string;
  };
  const draft = await migration('draft');
  const connected = await migration('connected');
  const ready = await migration('ready');
  const paused = await migration('paused');
  const syncing = await migration('syncing');
  const completed = await migration('completed');
  s.app.jobs.start();
  pages.push(
    [`/settings/migrations/${draft}`, 'migration-2-connect'],
    [`/settings/migrations/${connected}?step=choose`, 'migration-3-choose'],
    [`/settings/migrations/${connected}?step=map`, 'migration-4-map'],
    [`/settings/migrations/${ready}`, 'migration-5-review'],
    [`/settings/migrations/${paused}`, 'migration-6-copy'],
    [`/settings/migrations/${syncing}`, 'migration-7-switch'],
    [`/settings/migrations/${completed}`, 'migration-8-done'],
    ['/settings/migrations', 'migration-list'],
  );
  return { pages, stop: () => d.stop() };
}
