// Broadcasts: drafts with recipients (from contacts or a list of addresses, de-duplicated),
// scheduling, pause, resume and cancel. Sending is the `broadcast.send` job (sender.ts).
//
// Refusals: 409 `broadcast_state` (with `status`) for an action the broadcast's status does not
// allow; 409 `no_recipients`; 409 `smtp_not_configured` for a channel without SMTP account;
// 409 `broadcasts_suspended` / `broadcasts_not_approved` from the workspace's governance; 422
// `hosted_limit` (limit SVC_BROADCAST_DAILY_RECIPIENTS) for a broadcast with more recipients than
// the server lets a workspace mail in one day. A broadcast larger than today's allowance (warm-up,
// workspace limit, what was sent today) is accepted and continues on the following days.
import type { Insertable, Selectable, Transaction } from 'kysely';
import { z } from 'zod';
import type { Access } from '../auth/access.js';
import { requireInbox } from '../auth/access.js';
import { type ChannelRow, channelsOfInbox, findChannel, findWorkspaceChannel } from '../channels/store.js';
import { normalizeAddress } from '../contacts/service.js';
import { firstEmailsOf, reachableContactIds, reachableContactIdsAfter } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import type { BroadcastRecipientsTable, BroadcastsTable, Database, Db, RecipientStatus } from '../db/schema.js';
import { resolveInbox } from '../inboxes/service.js';
import { hasSmtpAccount } from '../mail/transport.js';
import { assertTenantMaySend } from '../mailer-tenants/sending.js';
import { iso } from '../platform/clock.js';
import { type AppError, conflict, hostedLimit, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import { charCount } from '../platform/text.js';
import { getWorkspace } from '../workspaces/service.js';
import { assertMaySend } from './governance.js';
import { checkSegmentAudience } from './segment-audience.js';
import { scheduleSendJob } from './sender.js';
import { type BroadcastRow, findBroadcast } from './store.js';

export const MAX_SUBJECT = 998;
export const MAX_BODY_CHARS = 1024 * 1024;
/** Addresses or contact ids per request (add more with further requests). */
export const MAX_PER_REQUEST = 10_000;

export interface RecipientsInput {
  emails?: string[];
  contactIds?: string[];
  allContacts?: boolean;
}

export interface NewBroadcast {
  inboxId: string;
  channelId?: string;
  subject: string;
  text: string;
  html?: string | null;
  recipients?: RecipientsInput;
  /** A contact segment whose contacts become recipients when sending starts. */
  segmentId?: string | null;
}

function checkContent(input: { subject?: string; text?: string; html?: string | null }) {
  if (input.subject !== undefined && (!input.subject.trim() || input.subject.length > MAX_SUBJECT || /[\r\n]/.test(input.subject))) {
    throw invalid(`subject must be 1 to ${MAX_SUBJECT} characters on one line`);
  }
  if (input.text !== undefined && (!input.text.trim() || charCount(input.text) > MAX_BODY_CHARS))
    throw invalid(`text must be 1 to ${MAX_BODY_CHARS} characters`);
  if (input.html !== undefined && input.html !== null && charCount(input.html) > MAX_BODY_CHARS)
    throw invalid(`html must be at most ${MAX_BODY_CHARS} characters`);
}

function actorId(access: Access): string {
  return access.actor.kind === 'member' ? access.actor.personId : access.actor.keyId;
}

/** The e-mail channel the broadcast goes through: the one named, or the inbox's only one with an SMTP account. */
async function pickChannel(ctx: Pick<Ctx, 'db'>, workspaceId: string, inboxId: string, channelId: string | undefined): Promise<ChannelRow> {
  if (channelId) {
    const ch = await findWorkspaceChannel(ctx.db, workspaceId, channelId);
    if (!ch) throw notFound('channel');
    if (ch.inbox_id !== inboxId) throw invalid('the channel belongs to another inbox');
    if (ch.kind !== 'email') throw invalid('broadcasts go through an e-mail channel');
    if (!hasSmtpAccount(ch)) throw conflict(`channel ${ch.id} has no SMTP account; set its SMTP server, user name and password first`, 'smtp_not_configured');
    return ch;
  }
  const candidates = (await channelsOfInbox(ctx.db, inboxId, 'email')).filter(hasSmtpAccount);
  if (candidates.length === 0) throw conflict('the inbox has no e-mail channel with an SMTP account', 'smtp_not_configured');
  if (candidates.length > 1) throw invalid(`the inbox has several e-mail channels; name one with channel_id (${candidates.map((c) => c.id).join(', ')})`);
  return candidates[0];
}

export async function getBroadcastFor(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<BroadcastRow> {
  const b = await findBroadcast(ctx.db, id);
  if (!b || b.workspace_id !== access.workspaceId) throw notFound('broadcast');
  requireInbox(access, b.inbox_id, 'broadcast');
  return b;
}

function stateConflict(b: BroadcastRow, action: string): AppError {
  return conflict(`a ${b.status} broadcast cannot be ${action}`, 'broadcast_state', { status: b.status });
}

function checkServerLimit(ctx: Pick<Ctx, 'config'>, count: number): void {
  const server = ctx.config.broadcasts.dailyRecipients;
  if (server > 0 && count > server) {
    throw hostedLimit(
      'SVC_BROADCAST_DAILY_RECIPIENTS',
      `a broadcast may have at most ${server} recipients on this server (the most a workspace may mail in one day); split the list`,
    );
  }
}

export async function createBroadcast(ctx: Ctx, access: Access, input: NewBroadcast) {
  checkContent(input);
  const inbox = await resolveInbox(ctx, access.workspaceId, input.inboxId);
  requireInbox(access, inbox.id);
  const channel = await pickChannel(ctx, access.workspaceId, inbox.id, input.channelId);
  const segmentId = input.segmentId ? await checkSegmentAudience(ctx, access, input.segmentId) : null;
  const now = iso(ctx.clock.now());
  const row: Insertable<BroadcastsTable> & { id: string } = {
    id: newId('bc'),
    workspace_id: access.workspaceId,
    inbox_id: inbox.id,
    channel_id: channel.id,
    subject: input.subject.trim(),
    text: input.text,
    html: input.html ?? null,
    status: 'draft',
    pause_reason: null,
    pause_detail: null,
    paused_at: null,
    send_at: null,
    started_at: null,
    finished_at: null,
    recipients_deleted_at: null,
    continues_at: null,
    sender_domain: null,
    segment_id: segmentId,
    created_by: actorId(access),
    created_at: now,
    updated_at: now,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await trx.insertInto('broadcasts').values(row).execute();
    if (input.recipients) await insertRecipients({ ...ctx, db: trx }, access, row.id, input.recipients);
  });
  return (await findBroadcast(ctx.db, row.id))!;
}

export async function updateBroadcast(
  ctx: Ctx,
  access: Access,
  id: string,
  patch: { subject?: string; text?: string; html?: string | null; channelId?: string; segmentId?: string | null },
) {
  checkContent(patch);
  const b = await getBroadcastFor(ctx, access, id);
  if (b.status !== 'draft') throw stateConflict(b, 'changed');
  const set: Partial<BroadcastRow> = { updated_at: iso(ctx.clock.now()) };
  if (patch.subject !== undefined) set.subject = patch.subject.trim();
  if (patch.text !== undefined) set.text = patch.text;
  if (patch.html !== undefined) set.html = patch.html;
  if (patch.channelId !== undefined) set.channel_id = (await pickChannel(ctx, access.workspaceId, b.inbox_id, patch.channelId)).id;
  if (patch.segmentId !== undefined) set.segment_id = patch.segmentId === null ? null : await checkSegmentAudience(ctx, access, patch.segmentId);
  await ctx.db.updateTable('broadcasts').set(set).where('id', '=', b.id).where('status', '=', 'draft').execute();
  return (await findBroadcast(ctx.db, b.id))!;
}

/** Addresses from the input: listed ones, and the first address of each named (or every) contact. */
async function* candidateAddresses(
  ctx: Pick<Ctx, 'db'>,
  access: Access,
  input: RecipientsInput,
): AsyncGenerator<{ email: string; contactId: string | null }[]> {
  if (input.emails?.length) {
    const bad: string[] = [];
    const out: { email: string; contactId: string | null }[] = [];
    for (const raw of input.emails) {
      try {
        out.push({ email: normalizeAddress(raw), contactId: null });
      } catch {
        bad.push(raw.slice(0, 100));
      }
    }
    if (bad.length)
      throw invalid(`${bad.length} address(es) are not valid e-mail addresses`, {
        issues: bad.slice(0, 20).map((b) => ({ path: 'recipients.emails', message: `not an e-mail address: ${JSON.stringify(b)}` })),
      });
    yield out;
  }
  if (input.contactIds?.length) {
    const ids = [...new Set(input.contactIds)];
    const found = await reachableContactIds(ctx.db, access.workspaceId, access.inboxIds, ids);
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length)
      throw invalid(`${missing.length} contact(s) not found`, {
        issues: missing.slice(0, 20).map((id) => ({ path: 'recipients.contact_ids', message: `no contact ${id}` })),
      });
    for (let i = 0; i < ids.length; i += 500) yield firstEmailsOf(ctx.db, ids.slice(i, i + 500));
  }
  if (input.allContacts) {
    let after = '';
    for (;;) {
      const page = await reachableContactIdsAfter(ctx.db, access.workspaceId, access.inboxIds, after, 2000);
      if (page.length === 0) break;
      yield firstEmailsOf(ctx.db, page);
      after = page[page.length - 1];
    }
  }
}

/** Adds de-duplicated recipients in the caller's transaction; returns how many were new. */
async function insertRecipients(
  ctx: Omit<Ctx, 'db'> & { db: Transaction<Database> },
  access: Access,
  broadcastId: string,
  input: RecipientsInput,
): Promise<{ added: number; total: number }> {
  const counted = (input.emails?.length ?? 0) + (input.contactIds?.length ?? 0);
  if (counted > MAX_PER_REQUEST) throw invalid(`at most ${MAX_PER_REQUEST} addresses and contact ids per request; add more with further requests`);
  const last = await ctx.db
    .selectFrom('broadcast_recipients')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('broadcast_id', '=', broadcastId)
    .executeTakeFirst();
  let seq = Number(last?.seq ?? 0);
  let added = 0;
  for await (const batch of candidateAddresses(ctx, access, input)) {
    const unique = new Map<string, string | null>();
    for (const a of batch) if (!unique.has(a.email)) unique.set(a.email, a.contactId);
    const rows: Insertable<BroadcastRecipientsTable>[] = [...unique].map(([email, contactId]) => ({
      broadcast_id: broadcastId,
      seq: ++seq,
      email,
      contact_id: contactId,
      status: 'pending' as RecipientStatus,
      retry_at: null,
      error: null,
      sent_at: null,
      provider_message_id: null,
      bounced_at: null,
      complained_at: null,
      unsubscribed_at: null,
    }));
    for (let i = 0; i < rows.length; i += 500) {
      const result = await ctx.db
        .insertInto('broadcast_recipients')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['broadcast_id', 'email']).doNothing())
        .executeTakeFirst();
      added += Number(result.numInsertedOrUpdatedRows ?? 0);
    }
  }
  const updated = await ctx.db
    .updateTable('broadcasts')
    .set((eb) => ({ recipients_count: eb('recipients_count', '+', added), updated_at: iso(ctx.clock.now()) }))
    .where('id', '=', broadcastId)
    .returning('recipients_count')
    .executeTakeFirstOrThrow();
  checkServerLimit(ctx, updated.recipients_count);
  return { added, total: updated.recipients_count };
}

export async function addRecipients(ctx: Ctx, access: Access, id: string, input: RecipientsInput) {
  const b = await getBroadcastFor(ctx, access, id);
  if (b.status !== 'draft') throw stateConflict(b, 'given more recipients');
  const result = await ctx.db.transaction().execute(async (trx) => {
    const locked = await trx.selectFrom('broadcasts').select('status').where('id', '=', b.id).executeTakeFirstOrThrow();
    if (locked.status !== 'draft') throw stateConflict({ ...b, status: locked.status }, 'given more recipients');
    return insertRecipients({ ...ctx, db: trx }, access, b.id, input);
  });
  return { added: result.added, recipients: result.total };
}

/** Sending may start: the workspace may send and the channel can. */
async function checkMaySend(ctx: Ctx, b: BroadcastRow): Promise<ChannelRow> {
  const workspace = await getWorkspace(ctx, b.workspace_id);
  await assertMaySend(ctx, workspace);
  checkServerLimit(ctx, b.recipients_count);
  const channel = b.channel_id ? await findChannel(ctx.db, b.channel_id) : undefined;
  if (!channel || !hasSmtpAccount(channel)) throw conflict('the broadcast’s e-mail channel is gone or has no SMTP account', 'smtp_not_configured');
  await assertTenantMaySend(ctx, channel);
  return channel;
}

function senderDomain(channel: ChannelRow): string | null {
  const address = channel.from_address ?? channel.address ?? '';
  return address.includes('@') ? address.slice(address.lastIndexOf('@') + 1) : null;
}

export async function scheduleBroadcast(ctx: Ctx, access: Access, id: string, sendAt?: string) {
  const b = await getBroadcastFor(ctx, access, id);
  if (b.status !== 'draft') throw stateConflict(b, 'scheduled');
  if (b.recipients_count === 0 && !b.segment_id) throw conflict('the broadcast has no recipients', 'no_recipients');
  const channel = await checkMaySend(ctx, b);
  const now = ctx.clock.now();
  const at = sendAt ? new Date(sendAt) : now;
  if (Number.isNaN(at.getTime())) throw invalid('send_at must be an ISO 8601 time');
  const runAt = at > now ? at : now;
  await ctx.db.transaction().execute(async (trx) => {
    const changed = await trx
      .updateTable('broadcasts')
      .set({ status: 'scheduled', send_at: iso(runAt), sender_domain: senderDomain(channel), updated_at: iso(now) })
      .where('id', '=', b.id)
      .where('status', '=', 'draft')
      .executeTakeFirst();
    if (Number(changed.numUpdatedRows) === 0) throw conflict('the broadcast changed meanwhile; read it again', 'broadcast_state');
    await scheduleSendJob({ db: trx, clock: ctx.clock }, b.id, runAt);
  });
  ctx.jobs.wake();
  return (await findBroadcast(ctx.db, b.id))!;
}

export async function pauseBroadcast(ctx: Ctx, access: Access, id: string) {
  const b = await getBroadcastFor(ctx, access, id);
  if (b.status !== 'scheduled' && b.status !== 'sending') throw stateConflict(b, 'paused');
  const now = iso(ctx.clock.now());
  const paused = await ctx.db
    .updateTable('broadcasts')
    .set({ status: 'paused', pause_reason: 'manual', pause_detail: null, paused_at: now, continues_at: null, updated_at: now })
    .where('id', '=', b.id)
    .where('status', 'in', ['scheduled', 'sending'])
    .executeTakeFirst();
  if (Number(paused.numUpdatedRows)) ctx.metrics.broadcastsPaused.inc({ reason: 'manual' });
  return (await findBroadcast(ctx.db, b.id))!;
}

/** A member resumes a paused broadcast (whatever paused it), once the workspace and inbox may send. */
export async function resumeBroadcast(ctx: Ctx, access: Access, id: string) {
  const b = await getBroadcastFor(ctx, access, id);
  if (b.status !== 'paused') throw stateConflict(b, 'resumed');
  await checkMaySend(ctx, b);
  const now = ctx.clock.now();
  const runAt = b.send_at && new Date(b.send_at) > now ? new Date(b.send_at) : now;
  await ctx.db.transaction().execute(async (trx) => {
    const changed = await trx
      .updateTable('broadcasts')
      .set({
        status: b.started_at ? 'sending' : 'scheduled',
        pause_reason: null,
        pause_detail: null,
        paused_at: null,
        sender_failures: 0,
        updated_at: iso(now),
      })
      .where('id', '=', b.id)
      .where('status', '=', 'paused')
      .executeTakeFirst();
    if (Number(changed.numUpdatedRows) === 0) throw conflict('the broadcast changed meanwhile; read it again', 'broadcast_state');
    await scheduleSendJob({ db: trx, clock: ctx.clock }, b.id, runAt);
  });
  ctx.jobs.wake();
  return (await findBroadcast(ctx.db, b.id))!;
}

export async function cancelBroadcast(ctx: Ctx, access: Access, id: string) {
  const b = await getBroadcastFor(ctx, access, id);
  if (b.status === 'sent' || b.status === 'cancelled') throw stateConflict(b, 'cancelled');
  const now = iso(ctx.clock.now());
  await ctx.db
    .updateTable('broadcasts')
    .set({ status: 'cancelled', finished_at: now, continues_at: null, updated_at: now })
    .where('id', '=', b.id)
    .where('status', 'not in', ['sent', 'cancelled'])
    .execute();
  return (await findBroadcast(ctx.db, b.id))!;
}

const cursorShape = z.object({ id: z.string() });

export async function listBroadcasts(ctx: Pick<Ctx, 'db'>, access: Access, page: { limit?: number; cursor?: string }) {
  const limit = page.limit ?? 50;
  const after = decodeCursor(page.cursor, cursorShape);
  let q = ctx.db.selectFrom('broadcasts').selectAll().where('workspace_id', '=', access.workspaceId);
  if (access.inboxIds !== null) q = access.inboxIds.length ? q.where('inbox_id', 'in', [...access.inboxIds]) : q.where('inbox_id', '=', '');
  if (after) q = q.where('id', '<', after.id);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return toPage(rows, limit, (r) => ({ id: r.id }), formatBroadcast);
}

const recipientCursor = z.object({ seq: z.number().int() });

/** Recipients in send order, with their delivery and feedback state. */
export async function listRecipients(ctx: Pick<Ctx, 'db'>, access: Access, id: string, page: { limit?: number; cursor?: string; status?: RecipientStatus }) {
  const b = await getBroadcastFor(ctx, access, id);
  const limit = page.limit ?? 50;
  const after = decodeCursor(page.cursor, recipientCursor);
  let q = ctx.db.selectFrom('broadcast_recipients').selectAll().where('broadcast_id', '=', b.id);
  if (page.status) q = q.where('status', '=', page.status);
  if (after) q = q.where('seq', '>', after.seq);
  const rows = await q
    .orderBy('seq')
    .limit(limit + 1)
    .execute();
  return toPage(rows, limit, (r) => ({ seq: r.seq }), formatRecipient);
}

export function formatBroadcast(b: BroadcastRow) {
  const pending = Math.max(0, b.recipients_count - b.sent_count - b.failed_count - b.suppressed_count);
  return {
    id: b.id,
    inbox_id: b.inbox_id,
    channel_id: b.channel_id,
    subject: b.subject,
    text: b.text,
    html: b.html,
    status: b.status,
    pause_reason: b.pause_reason,
    pause_detail: b.pause_detail,
    paused_at: b.paused_at,
    send_at: b.send_at,
    started_at: b.started_at,
    finished_at: b.finished_at,
    continues_at: b.continues_at,
    segment_id: b.segment_id,
    segment_resolved_at: b.segment_resolved_at,
    counts: {
      recipients: b.recipients_count,
      pending: b.status === 'cancelled' ? 0 : pending,
      sent: b.sent_count,
      failed: b.failed_count,
      suppressed: b.suppressed_count,
      bounced: b.bounced_count,
      complained: b.complained_count,
      unsubscribed: b.unsubscribed_count,
    },
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

export function formatRecipient(r: Selectable<BroadcastRecipientsTable>) {
  return {
    seq: r.seq,
    email: r.email,
    contact_id: r.contact_id,
    status: r.status,
    attempts: r.attempts,
    error: r.error,
    sent_at: r.sent_at,
    bounced_at: r.bounced_at,
    complained_at: r.complained_at,
    unsubscribed_at: r.unsubscribed_at,
  };
}
