// Keeping the mailbox read live after the move (issue 38): a migration's `keep_reading` choice. In
// the transaction that completes the migration (finish, quiet period, sync limit; never cancel) the
// sealed password or Google/Microsoft grant moves to the channel's reader, so the team need not sign
// in again, and the reader's INBOX and Sent start where the migration's sync last read, so mail that
// reached the old mailbox in between is read (the digest stores mail that came both ways once).
// The migration still ends with its password deleted: the credential is moved, not copied.
import type { Access } from '../../auth/access.js';
import { type ChannelRow, findChannel } from '../../channels/store.js';
import type { Ctx } from '../../context.js';
import { findGrant, saveGrant } from '../../mail-accounts/grants.js';
import { READER_CHANGED } from '../../mailbox-reader/background.js';
import { findReader, saveFolder, saveReader } from '../../mailbox-reader/store.js';
import { iso } from '../../platform/clock.js';
import { conflict } from '../../platform/errors.js';
import { imapServerOf } from '../sources/connect.js';
import { findPreset } from '../sources/presets.js';
import { type Grant, MICROSOFT_SCOPE } from '../sources/sign-in.js';
import { readsLive } from '../states.js';
import { type Actor, logActivity, type MigrationRow, type Tx } from '../store.js';

/** Why keep_reading cannot be chosen: not an IMAP mailbox (export file, help desk), or no e-mail channel to read it. */
export type NotPossible = 'not_a_mailbox' | 'no_email_channel';

async function notPossible(db: Tx['db'], m: Pick<MigrationRow, 'provider' | 'channel_id'>, channel?: ChannelRow): Promise<NotPossible | null> {
  if (!readsLive(m)) return 'not_a_mailbox';
  const found = channel ?? (m.channel_id ? await findChannel(db, m.channel_id) : undefined);
  return found?.kind === 'email' ? null : 'no_email_channel';
}

/** What the migration's answer shows of the choice. `result` is what the completion did (handed_over or why it skipped). */
export async function keepReadingView(db: Tx['db'], m: MigrationRow) {
  const channel = m.channel_id ? await findChannel(db, m.channel_id) : undefined;
  const why = await notPossible(db, m, channel);
  return {
    on: m.keep_reading === 1,
    possible: why === null,
    not_possible_reason: why,
    channel_id: m.channel_id,
    channel_name: channel?.name ?? null,
    channel_inbox_id: channel?.inbox_id ?? null,
    // Such a channel keeps its own mailbox: the completion would skip the hand-over.
    channel_reads_a_mailbox: why === null && !!(await findReader(db, channel!.id)),
    result: m.reading_handover,
  };
}

/** service.ts's `act` (passed in: switching/service.ts imports this file). */
type KeepReadingAct = (
  ctx: Ctx,
  access: Access,
  id: string,
  action: 'keep_reading',
  change: (m: MigrationRow, tx: Tx) => Promise<{ set: Partial<MigrationRow>; detail?: Record<string, unknown>; log?: string } | undefined>,
) => Promise<unknown>;

/** PUT …/keep-reading: the choice, while the migration has not ended (409 when the channel could not read the mailbox). */
export async function setKeepReading(ctx: Ctx, access: Access, id: string, input: { keep_reading: boolean }, act: KeepReadingAct) {
  return act(ctx, access, id, 'keep_reading', async (m, tx) => {
    if (input.keep_reading) await requirePossible(tx.db, m);
    if ((m.keep_reading === 1) === input.keep_reading) return undefined;
    return { set: { keep_reading: input.keep_reading ? 1 : 0 }, log: 'keep_reading_changed', detail: { keep_reading: input.keep_reading } };
  });
}

export async function requirePossible(db: Tx['db'], m: MigrationRow): Promise<void> {
  const why = await notPossible(db, m);
  if (why === 'not_a_mailbox') throw conflict('only a mailbox read over IMAP or a Google/Microsoft sign-in can be kept reading', 'keep_reading_not_possible');
  if (why) throw conflict('the migration has no e-mail channel to read the mailbox as', 'keep_reading_not_possible');
}

export interface HandOver {
  /** The migration's columns to save with its completion. */
  set: Pick<MigrationRow, 'reading_handover'>;
  /** The channel whose reader was made (READER_CHANGED after commit). */
  channelId?: string;
}

/**
 * In the completing transaction, before the password is deleted: moves the migration's credential to
 * its channel's reader when keep_reading is on, and logs what it did. Nothing secret is logged.
 */
export async function handOverReading(ctx: Pick<Ctx, 'sealer'>, tx: Tx, m: MigrationRow, actor: Actor): Promise<HandOver> {
  if (m.keep_reading !== 1) return { set: { reading_handover: null } };
  const outcome = await handOver(ctx, tx, m);
  if ('skipped' in outcome) {
    await logActivity(tx, m, actor, 'reading_handover_skipped', { channel_id: m.channel_id, reason: outcome.skipped });
    return { set: { reading_handover: outcome.skipped } };
  }
  await logActivity(tx, m, actor, 'reading_handed_over', {
    channel_id: m.channel_id,
    kind: outcome.kind,
    username: m.username,
    sign_in: outcome.signIn,
    folders_from_sync: outcome.folders,
  });
  return { set: { reading_handover: 'handed_over' }, channelId: m.channel_id! };
}

type Outcome = { skipped: string } | { kind: 'imap' | 'google' | 'microsoft'; signIn: 'moved' | 'channel_own' | null; folders: string[] };

async function handOver(ctx: Pick<Ctx, 'sealer'>, tx: Tx, m: MigrationRow): Promise<Outcome> {
  const why = await notPossible(tx.db, m);
  if (why) return { skipped: why };
  const channel = (await findChannel(tx.db, m.channel_id!))!;
  if (!m.password_sealed || !m.username) return { skipped: 'no_credentials' };
  // A channel that reads a mailbox already keeps it: never overwritten.
  if (await findReader(tx.db, channel.id)) return { skipped: 'channel_reads_a_mailbox' };
  const now = iso(tx.clock.now());
  const preset = findPreset(m.provider)!;
  let kind: 'imap' | 'google' | 'microsoft';
  let signIn: 'moved' | 'channel_own' | null = null;
  let server: { host: string; port: number; tls: 'tls' | 'starttls' | 'none' } | undefined;
  if (preset.kind === 'sign_in') {
    const provider = preset.id as 'google' | 'microsoft';
    kind = provider;
    // One sign-in per channel (checkOneSignIn): a channel that sends with the other provider cannot read with this one.
    if (channel.smtp_auth !== 'password' && channel.smtp_auth !== provider) return { skipped: 'channel_signs_in_with_other_provider' };
    const own = await findGrant(tx.db, channel.id);
    if (own && own.state === 'ok' && own.provider === provider) {
      // The channel's own sign-in reads the mailbox only if it is the same account.
      if (own.account.toLowerCase() !== m.username.toLowerCase()) return { skipped: 'channel_signed_in_as_another_account' };
      signIn = 'channel_own';
    } else {
      // The migration's Microsoft grant covers reading only; a channel that sends with Microsoft needs its own sign-in.
      if (provider === 'microsoft' && channel.smtp_auth === 'microsoft') return { skipped: 'channel_sign_in_needed' };
      const grant = JSON.parse(ctx.sealer.open(m.password_sealed)) as Grant;
      // Renewed later with the scope it was granted (the channel's own Microsoft scope adds SMTP).
      const moved: Grant = provider === 'microsoft' ? { ...grant, scope: MICROSOFT_SCOPE } : grant;
      await saveGrant(tx, ctx.sealer, { channelId: channel.id, workspaceId: channel.workspace_id, provider, account: m.username, grant: moved });
      signIn = 'moved';
    }
  } else {
    kind = 'imap';
    server = imapServerOf(m);
    if (!server) return { skipped: 'no_credentials' };
  }
  await saveReader(tx.db, {
    channel_id: channel.id,
    workspace_id: channel.workspace_id,
    kind,
    host: server?.host ?? null,
    port: server?.port ?? null,
    tls: server?.tls ?? null,
    username: kind === 'imap' ? m.username : null,
    // The same sealed text: the password moves, it is never opened here.
    password_sealed: kind === 'imap' ? m.password_sealed : null,
    state: 'connecting',
    mode: null,
    error_step: null,
    error_message: null,
    failures: 0,
    retry_at: null,
    last_read_at: null,
    connected_at: null,
    lease_owner: null,
    lease_until: null,
    created_at: now,
    updated_at: now,
  });
  return { kind, signIn, folders: await seedFolders(tx, m, channel.id, now) };
}

/**
 * The reader's INBOX and Sent start at the UID the migration's sync read last (same UIDVALIDITY).
 * The reader keeps a starting point only for the folder path it finds itself (INBOX, the \Sent
 * folder); another path starts from the mail that arrives after it connects.
 */
async function seedFolders(tx: Tx, m: MigrationRow, channelId: string, now: string): Promise<string[]> {
  const rows = await tx.db
    .selectFrom('mailbox_migration_folders')
    .select(['path', 'special_use', 'uid_validity', 'scanned_uid'])
    .where('migration_id', '=', m.id)
    .orderBy('path')
    .execute();
  const seeded: string[] = [];
  const inbox = rows.find((r) => r.path.toUpperCase() === 'INBOX');
  const sent = rows.find((r) => r.special_use === '\\Sent');
  for (const [role, row] of [
    ['inbox', inbox],
    ['sent', sent],
  ] as const) {
    if (!row?.uid_validity) continue;
    await saveFolder(tx.db, {
      channel_id: channelId,
      role,
      path: row.path,
      uid_validity: row.uid_validity,
      last_uid: Number(row.scanned_uid),
      updated_at: now,
    });
    seeded.push(role);
  }
  return seeded;
}

/** After the completing transaction committed: the new reader starts now. */
export function startHandedOverReader(ctx: Pick<Ctx, 'hub'>, handOver: HandOver | undefined): void {
  if (handOver?.channelId) ctx.hub.emit(READER_CHANGED, { channelId: handOver.channelId });
}
