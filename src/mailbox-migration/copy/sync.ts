// Switching delivery: while a migration is syncing, the old mailbox is read every two minutes
// (read-only, only UIDs it has not seen). A message the old mailbox received before the copy ended
// is history and is copied quietly like the rest; one received afterwards is new mail and goes the
// way inbound mail goes (events, webhooks, notifications), in the same transaction that records
// it, so that mail arriving both ways (by the new route and in the old mailbox) is stored once,
// and a restart neither loses nor repeats one. Mail the team sent from the old mailbox after the
// copy ended is still history (an outgoing message, quietly), never an incoming one.
import { findChannel } from '../../channels/store.js';
import type { Ctx } from '../../context.js';
import type { Db, MailboxMigrationItemsTable } from '../../db/schema.js';
import { announceEvents } from '../../events/service.js';
import { findStoredCopy, mailIdentity } from '../../mail/duplicates.js';
import { storeInboundMail } from '../../mail/ingest.js';
import type { InboundMail } from '../../mail/parse.js';
import { iso } from '../../platform/clock.js';
import type { MailSource } from '../sources/mail-source.js';
import { lockMigration, logActivity, type MigrationRow, SYSTEM, saveMigration } from '../store.js';
import { isProbeMail } from '../switching/service.js';
import { threadKeyOf } from './plan.js';
import { chooseFolders, type HeaderParser, itemOfHeaders, SCAN_HEADER_FIELDS } from './scan.js';
import { teamAddressesOf } from './team.js';

/** UIDs read per poll and folder (the rest is read by the next run, at once). */
export const SYNC_CHUNK = 200;

export interface SyncDeps {
  parseHeaders: HeaderParser;
  parse(raw: Buffer): Promise<InboundMail>;
}

export interface SyncOutcome {
  /** More UIDs are waiting: run again at once. */
  more: boolean;
  history: number;
  newMail: number;
  bothWays: number;
}

class ArrivedMeanwhile extends Error {}

/** Reads the UIDs each folder received since it was last read. */
export async function pollOldMailbox(ctx: Ctx, m: MigrationRow, mailbox: MailSource, deps: SyncDeps): Promise<SyncOutcome> {
  const outcome: SyncOutcome = { more: false, history: 0, newMail: 0, bothWays: 0 };
  const { chosen } = chooseFolders(m, await mailbox.folders());
  const rows = new Map((await ctx.db.selectFrom('mailbox_migration_folders').selectAll().where('migration_id', '=', m.id).execute()).map((r) => [r.path, r]));
  const team = await teamAddressesOf(ctx, m);
  const copyEnded = m.copy_ended_at ?? iso(ctx.clock.now());
  for (const folder of chosen) {
    if (folder.neverRead) continue;
    const row = rows.get(folder.path);
    const box = await mailbox.examine(folder.path);
    if (!row || row.uid_validity !== box.uidValidity) {
      // A folder chosen without a scan, or rebuilt at the provider: its present messages are not
      // read again (Message-IDs would de-duplicate them anyway); reading starts at its next UID.
      const values = {
        delimiter: folder.delimiter,
        special_use: folder.specialUse,
        uid_validity: box.uidValidity,
        scanned_uid: Math.max(0, box.uidNext - 1),
        messages: box.exists,
        uid_next: box.uidNext,
        scan_done: 1,
      };
      await ctx.db
        .insertInto('mailbox_migration_folders')
        .values({ migration_id: m.id, path: folder.path, ...values })
        .onConflict((oc) => oc.columns(['migration_id', 'path']).doUpdateSet(values))
        .execute();
      await logActivity({ db: ctx.db, clock: ctx.clock }, m, SYSTEM, 'sync_folder_reset', { folder: folder.path, uid_validity: box.uidValidity });
      continue;
    }
    const seen = Number(row.scanned_uid);
    const last = box.uidNext - 1;
    if (last <= seen) continue;
    const to = Math.min(last, seen + SYNC_CHUNK);
    if (to < last) outcome.more = true;
    const fetched = [];
    for await (const h of mailbox.headers(`${seen + 1}:${to}`, SCAN_HEADER_FIELDS)) if (h.uid > seen && h.uid <= to) fetched.push(h);
    fetched.sort((a, b) => a.uid - b.uid);
    for (const h of fetched) {
      const item = await itemOfHeaders(m.id, folder.path, box.uidValidity, h, deps.parseHeaders);
      item.team = item.from_address && team.addresses.has(item.from_address) ? 1 : 0;
      const receivedAt = h.internalDate && !Number.isNaN(h.internalDate.getTime()) ? iso(h.internalDate) : item.sent_at;
      const isNew = receivedAt >= copyEnded && item.team === 0;
      if (isProbeMail(item.rfc_id)) {
        // The test message reaching the old mailbox is not a conversation (its arrival by the new route is what counts).
        await recordItem(ctx, m, folder.path, h.uid, { ...item, status: 'skipped', skip_reason: 'test_message', new_mail: 1 });
      } else if (item.size > ctx.config.migration.maxMessageBytes) {
        await recordItem(ctx, m, folder.path, h.uid, { ...item, status: 'skipped', skip_reason: 'too_large', new_mail: isNew ? 1 : 0 });
      } else if (isNew) {
        const result = await deliverNewMail(ctx, m, mailbox, folder.path, h.uid, item, deps);
        if (result === 'both_ways') outcome.bothWays++;
        else outcome.newMail++;
      } else {
        await planHistory(ctx, m, folder.path, h.uid, item);
        outcome.history++;
      }
    }
    // Nothing came back for the rest of the range (expunged meanwhile): move on past it.
    await advanceReadPoint(ctx.db, m.id, folder.path, to);
  }
  return outcome;
}

/** Stores an item once (a repeated read of the same UID keeps the first row). */
async function insertItem(trx: Db, item: MailboxMigrationItemsTable): Promise<void> {
  await trx
    .insertInto('mailbox_migration_items')
    .values(item)
    .onConflict((oc) => oc.columns(['migration_id', 'source_key']).doNothing())
    .execute();
}

/** Moves a folder's read point past a UID (never back). */
async function advanceReadPoint(trx: Db, migrationId: string, folder: string, uid: number): Promise<void> {
  await trx
    .updateTable('mailbox_migration_folders')
    .set({ scanned_uid: uid })
    .where('migration_id', '=', migrationId)
    .where('path', '=', folder)
    .where('scanned_uid', '<', uid)
    .execute();
}

/** Records an item and moves the folder's read point past its UID, together. */
async function recordItem(ctx: Ctx, m: MigrationRow, folder: string, uid: number, item: MailboxMigrationItemsTable): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await insertItem(trx, item);
    await advanceReadPoint(trx, m.id, folder, uid);
  });
}

/**
 * History found while syncing: planned into the thread it belongs to (by References and
 * In-Reply-To among the migration's items), copied quietly by the copy step.
 */
async function planHistory(ctx: Ctx, m: MigrationRow, folder: string, uid: number, item: MailboxMigrationItemsTable): Promise<void> {
  const refs = item.refs ? (JSON.parse(item.refs) as string[]) : [];
  const names = [...new Set([item.rfc_id, ...refs].filter((x): x is string => !!x))];
  await ctx.db.transaction().execute(async (trx) => {
    const related = names.length
      ? await trx
          .selectFrom('mailbox_migration_items')
          .select('thread_key')
          .where('migration_id', '=', m.id)
          .where('rfc_id', 'in', names)
          .where('thread_key', 'is not', null)
          .limit(1)
          .executeTakeFirst()
      : undefined;
    const threadKey = related?.thread_key ?? threadKeyOf(item.rfc_id ?? `\u0000${item.source_key}`);
    // A message that starts a thread is skipped by the plan's rules for whole threads.
    const skipReason = related ? null : item.team ? 'team_only' : item.automatic && m.skip_automatic ? 'automatic_only' : null;
    if (skipReason) {
      await insertItem(trx, { ...item, thread_key: threadKey, status: 'skipped', skip_reason: skipReason });
      await advanceReadPoint(trx, m.id, folder, uid);
      return;
    }
    const existing = await trx
      .selectFrom('mailbox_migration_threads')
      .select(['thread_key', 'newest_at', 'messages'])
      .where('migration_id', '=', m.id)
      .where('thread_key', '=', threadKey)
      .executeTakeFirst();
    const duplicate = item.rfc_id
      ? await trx
          .selectFrom('mailbox_migration_items')
          .select('source_key')
          .where('migration_id', '=', m.id)
          .where('rfc_id', '=', item.rfc_id)
          .where('status', 'in', ['planned', 'copied'])
          .limit(1)
          .executeTakeFirst()
      : undefined;
    const status = duplicate ? 'duplicate' : 'planned';
    await insertItem(trx, { ...item, thread_key: threadKey, status, skip_reason: duplicate ? 'duplicate' : null });
    if (!duplicate) {
      if (existing) {
        await trx
          .updateTable('mailbox_migration_threads')
          .set({
            status: 'planned',
            skip_reason: null,
            messages: existing.messages + 1,
            newest_at: item.sent_at > existing.newest_at ? item.sent_at : existing.newest_at,
          })
          .where('migration_id', '=', m.id)
          .where('thread_key', '=', threadKey)
          .execute();
      } else {
        const recipients = item.recipients ? (JSON.parse(item.recipients) as string[]) : [];
        await trx
          .insertInto('mailbox_migration_threads')
          .values({
            migration_id: m.id,
            thread_key: threadKey,
            newest_at: item.sent_at,
            messages: 1,
            customer_address: item.team ? (recipients[0] ?? null) : item.from_address,
            customer_name: item.team ? null : item.from_name,
            subject: item.subject,
            status: 'planned',
            skip_reason: null,
            conversation_id: null,
          })
          .execute();
      }
    }
    await advanceReadPoint(trx, m.id, folder, uid);
  });
}

/**
 * New mail in the old mailbox: stored as inbound mail of the migration's channel unless the inbox
 * has it already (it came by the new route too). One transaction holds the message, the item and
 * the folder's read point.
 */
async function deliverNewMail(
  ctx: Ctx,
  m: MigrationRow,
  mailbox: MailSource,
  folder: string,
  uid: number,
  item: MailboxMigrationItemsTable,
  deps: SyncDeps,
): Promise<'new' | 'both_ways'> {
  let raw: Buffer | undefined;
  for await (const s of mailbox.sources([uid])) if (s.uid === uid) raw = s.source;
  if (!raw) {
    await recordItem(ctx, m, folder, uid, { ...item, status: 'skipped', skip_reason: 'gone', new_mail: 1 });
    return 'new';
  }
  const mail = await deps.parse(raw);
  const channel = m.channel_id ? await findChannel(ctx.db, m.channel_id) : undefined;
  if (!channel || !m.inbox_id) {
    await recordItem(ctx, m, folder, uid, { ...item, status: 'failed', error: 'the migration has no e-mail channel any more', new_mail: 1 });
    return 'new';
  }
  const target = { channel, workspaceId: m.workspace_id, inboxId: m.inbox_id, via: 'address' as const };
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await ctx.db.transaction().execute(async (trx) => {
        const current = await lockMigration(trx, m.id);
        if (!current || current.state !== 'syncing') throw new ArrivedMeanwhile('stopped');
        const known = await findStoredCopy(trx, target, mailIdentity(mail));
        let outcome: 'new' | 'both_ways';
        let stored: { conversation_id: string; message_id: string };
        if (known) {
          outcome = 'both_ways';
          stored = known;
        } else {
          const r = await storeInboundMail({ ...ctx, db: trx }, { target, mail, raw: raw!, envelopeFrom: item.from_address });
          // Registered by another transaction meanwhile: this one must not keep its rows.
          if (r.duplicate) throw new ArrivedMeanwhile('duplicate');
          outcome = 'new';
          stored = r;
          await saveMigration({ db: trx, clock: ctx.clock }, current, { last_old_only_at: iso(ctx.clock.now()) });
        }
        await insertItem(trx, {
          ...item,
          status: outcome === 'new' ? 'copied' : 'duplicate',
          skip_reason: outcome === 'new' ? null : 'duplicate',
          message_id: stored.message_id,
          conversation_id: stored.conversation_id,
          copied_at: iso(ctx.clock.now()),
          new_mail: 1,
        });
        await advanceReadPoint(trx, m.id, folder, uid);
        return outcome;
      });
      announceEvents(ctx);
      return result;
    } catch (error) {
      if (error instanceof ArrivedMeanwhile && error.message === 'duplicate' && attempt === 0) continue;
      if (error instanceof ArrivedMeanwhile && error.message === 'stopped') return 'new';
      throw error;
    }
  }
}
