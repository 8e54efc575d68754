// The chat widget's visitor side: a visitor opens a contact session with the channel's public key
// (from one of its allowed origins), starts conversations, writes and reads messages. Sessions
// expire 7 days after last use. A session proven with the inbox identity secret (an SDK or a
// signed-in site user) sees all of its contact's conversations in the inbox; any other session sees
// only the conversations it started itself, so claiming an address reveals nothing.

import { createHmac } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { SelectQueryBuilder } from 'kysely';
import { attachVisit, findRequestVisit, recordConversationStarted, type VisitorRequest, widgetAnalytics } from '../analytics/attribution.js';
import { isOpen, nextOpening } from '../business-hours/schedule.js';
import { inboxHours } from '../business-hours/service.js';
import { chatChannelForPublicKey, findChannel } from '../channels/store.js';
import { createAnonymousContact, findOrCreateContactByExternalId } from '../contacts/identify.js';
import { contactMergeState } from '../contacts/merged.js';
import { type ContactView, loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { openAttachment, storeUpload } from '../conversations/attachments.js';
import { applyConversationChanges } from '../conversations/changes.js';
import type { AttachmentRow, ConversationRow } from '../conversations/format.js';
import { previewOf } from '../conversations/preview.js';
import { appendMessage, startConversation, type Tx } from '../conversations/service.js';
import { attachmentsOf, findConversation } from '../conversations/store.js';
import {
  attachmentOfSentMessage,
  contactConversationIdsInInbox,
  conversationsByLastMessage,
  latestSentMessages,
  sentMessagesOf,
} from '../conversations/visitor.js';
import { retryOnUniqueViolation } from '../db/retry.js';
import type { ChannelsTable, ContactSessionsTable, Database, Db, MessagesTable } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { findInbox, type InboxRow } from '../inboxes/store.js';
import { peopleNames } from '../people/directory.js';
import { DAY, iso, MINUTE } from '../platform/clock.js';
import { randomToken, safeEqual, sha256Hex } from '../platform/crypto.js';
import { AppError, forbidden, invalid, notFound, unauthorized } from '../platform/errors.js';
import { withoutBidiControls } from '../platform/foreign-text.js';
import { newId } from '../platform/ids.js';
import { charCount } from '../platform/text.js';
import { answerInWidget, openWidgetRequest } from '../ratings/service.js';
import { teamOnline } from '../realtime/team-online.js';
import { signalTyping, type TypingThrottle } from '../typing/service.js';
import { workspaceIsLive } from '../workspaces/live.js';
import { chatHtml, visitorTextHtml } from './formatting.js';
import { markUploadsSent, recordUpload, uploadBudget } from './uploads.js';
import { type VisitorContext, visitorAttributes, visitorName } from './visitor-context.js';

export type ContactSessionRow = ContactSessionsTable;
export const CONTACT_SESSION_IDLE_MS = 7 * DAY;
export const CONTACT_TOKEN_PREFIX = 'svc_cs_';
export const MAX_VISITOR_MESSAGE_CHARS = 10_000;

type ChatChannel = ChannelsTable;

async function inboxOfChannel(db: Db, channel: ChatChannel): Promise<InboxRow> {
  const inbox = await findInbox(db, channel.inbox_id);
  if (!inbox) throw new Error(`inbox ${channel.inbox_id} of channel ${channel.id} is gone`);
  return inbox;
}

/** The live chat channel of a public key; deleted workspaces' keys are refused at once. */
export async function chatChannelByKey(ctx: Pick<Ctx, 'db'>, publicKey: string): Promise<ChatChannel> {
  const channel = await chatChannelForPublicKey(ctx.db, publicKey);
  if (!channel) throw notFound('chat channel for this public key');
  return channel;
}

/** Browsers send Origin on cross-site requests; it must be one of the channel's allowed origins. */
export function checkOrigin(channel: Pick<ChatChannel, 'origins'>, origin: string | undefined): void {
  if (origin === undefined) return;
  const allowed = JSON.parse(channel.origins ?? '[]') as string[];
  if (!allowed.includes(origin)) throw new AppError(403, 'origin_not_allowed', `the origin ${origin} is not allowed for this chat channel`);
}

/**
 * The proof an SDK or site sends: hex HMAC-SHA256 under the inbox identity secret of the external
 * id alone, or of `external_id + "\n" + email` (the address exactly as sent) to prove the address too.
 */
export function identityHash(identitySecret: string, externalId: string, email?: string): string {
  return createHmac('sha256', identitySecret)
    .update(email === undefined ? externalId : `${externalId}\n${email}`)
    .digest('hex');
}

export async function widgetConfig(ctx: Pick<Ctx, 'db' | 'clock'>, channel: ChatChannel, origin?: string) {
  const inbox = await inboxOfChannel(ctx.db, channel);
  const now = ctx.clock.now();
  const online = await teamOnline(ctx.db, channel.workspace_id, now);
  const analytics = await widgetAnalytics(ctx.db, channel.id, origin);
  const hours = await inboxHours(ctx.db, inbox);
  const open = isOpen(hours, now);
  const opening = open ? null : nextOpening(hours, now);
  return {
    channel: {
      name: channel.name,
      greeting: channel.greeting,
      allow_anonymous: channel.allow_anonymous === 1,
      ask_email_offline: channel.ask_email_offline === 1,
    },
    inbox: { name: inbox.name, mode: inbox.mode, expected_reply_minutes: inbox.expected_reply_minutes, timezone: inbox.timezone, locale: inbox.locale },
    team_online: online,
    analytics,
    hours: { open_now: open, next_opening: opening ? opening.toISOString() : null },
  };
}

export interface OpenSession {
  publicKey: string;
  origin?: string;
  visitor?: VisitorContext;
  email?: string;
  name?: string;
  externalId?: string;
  identityHash?: string;
}

export async function openContactSession(ctx: Ctx, input: OpenSession) {
  const channel = await chatChannelByKey(ctx, input.publicKey);
  checkOrigin(channel, input.origin);
  let verified = false;
  let emailProven = false;
  if (input.externalId !== undefined) {
    const inbox = await inboxOfChannel(ctx.db, channel);
    const secret = ctx.sealer.open(inbox.identity_secret_sealed);
    const given = (input.identityHash ?? '').toLowerCase();
    emailProven = input.email !== undefined && safeEqual(identityHash(secret, input.externalId, input.email), given);
    if (!emailProven && !safeEqual(identityHash(secret, input.externalId), given)) {
      throw unauthorized(
        'identity_hash does not prove this external id (hex HMAC-SHA256 under the inbox identity secret of external_id, or of external_id + "\\n" + email)',
      );
    }
    verified = true;
  } else if (input.email === undefined && channel.allow_anonymous !== 1) {
    throw new AppError(400, 'identity_required', 'this chat channel needs an e-mail address (anonymous visitors are not allowed)');
  }
  const now = ctx.clock.now();
  const token = CONTACT_TOKEN_PREFIX + randomToken(32);
  const visitorLocale = verified || input.name?.trim() ? 'en' : (await inboxOfChannel(ctx.db, channel)).locale;
  const result = await retryOnUniqueViolation(() =>
    inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      const workspaceId = channel.workspace_id;
      const name = input.name?.trim() || (verified ? null : visitorName(input.visitor, visitorLocale));
      // An address the identity hash does not cover never selects or joins an existing contact.
      const contact = verified
        ? (
            await findOrCreateContactByExternalId(tx, {
              workspaceId,
              inboxId: channel.inbox_id,
              externalId: input.externalId!,
              name,
              email: input.email,
              emailProven,
            })
          ).view
        : await createAnonymousContact(tx, { workspaceId, name, unverifiedEmail: input.email, attributes: visitorAttributes(input.visitor) });
      const session: ContactSessionRow = {
        id: newId('cs', now.getTime()),
        workspace_id: workspaceId,
        channel_id: channel.id,
        inbox_id: channel.inbox_id,
        contact_id: contact.contact.id,
        token_hash: sha256Hex(token),
        verified: verified ? 1 : 0,
        created_at: iso(now),
        last_used_at: iso(now),
        expires_at: iso(now.getTime() + CONTACT_SESSION_IDLE_MS),
      };
      await trx.insertInto('contact_sessions').values(session).execute();
      return { session, contact };
    }),
  );
  announceEvents(ctx);
  return { token, ...result };
}

export interface VisitorSession {
  session: ContactSessionRow;
  channel: ChatChannel;
}

/** The live session of a visitor token, sliding its expiry forward (written at most every 5 minutes). */
export async function findContactSession(ctx: Pick<Ctx, 'db' | 'clock'>, token: string): Promise<VisitorSession | undefined> {
  if (!token.startsWith(CONTACT_TOKEN_PREFIX)) return undefined;
  const now = ctx.clock.now();
  const session = await ctx.db
    .selectFrom('contact_sessions')
    .selectAll('contact_sessions')
    .where('contact_sessions.token_hash', '=', sha256Hex(token))
    .where('contact_sessions.expires_at', '>', iso(now))
    .where(workspaceIsLive('contact_sessions.workspace_id'))
    .executeTakeFirst();
  if (!session) return undefined;
  const channel = await findChannel(ctx.db, session.channel_id);
  if (!channel) return undefined;
  // A merged contact's sessions follow it to the contact it was merged into.
  const contact = await contactMergeState(ctx.db, session.contact_id);
  if (!contact) return undefined;
  if (contact.merged_into_id) session.contact_id = contact.merged_into_id;
  if (now.getTime() - Date.parse(session.last_used_at) > 5 * MINUTE) {
    session.last_used_at = iso(now);
    session.expires_at = iso(now.getTime() + CONTACT_SESSION_IDLE_MS);
    await ctx.db
      .updateTable('contact_sessions')
      .set({ last_used_at: session.last_used_at, expires_at: session.expires_at, contact_id: session.contact_id })
      .where('id', '=', session.id)
      .execute();
  }
  return { session, channel };
}

/** Ids of the conversations this session may read. */
export async function visibleConversationIds(db: Tx['db'], session: ContactSessionRow): Promise<string[]> {
  if (session.verified === 1) {
    return contactConversationIdsInInbox(db, { workspaceId: session.workspace_id, inboxId: session.inbox_id, contactId: session.contact_id });
  }
  const rows = await db.selectFrom('contact_session_conversations').select('conversation_id').where('session_id', '=', session.id).execute();
  return rows.map((r) => r.conversation_id);
}

async function visibleConversation(db: Tx['db'], session: ContactSessionRow, id: string) {
  const conversation = await findConversation(db, session.workspace_id, id);
  if (!conversation || !(await visibleConversationIds(db, session)).includes(id)) throw notFound('conversation');
  return conversation;
}

type VisitorAttachmentFields = Pick<AttachmentRow, 'id' | 'filename' | 'content_type' | 'size'>;

/** Downloaded with the visitor's session (Bearer), so the widget fetches it rather than linking it. */
export function visitorAttachmentUrl(id: string): string {
  return `/v1/widget/attachments/${id}/content`;
}

function formatVisitorAttachment(a: VisitorAttachmentFields) {
  return { id: a.id, filename: withoutBidiControls(a.filename), content_type: a.content_type, size: a.size, url: visitorAttachmentUrl(a.id) };
}

/** What a visitor sees of a message: never notes, internal events, delivery details or member ids. */
/** What a visitor sees of a team member: the first name only, as chat widgets do ("Ayşe", not "Ayşe Kaya"). */
export function visitorFacingName(name: string | null): string | null {
  const first = name?.trim().split(/\s+/)[0];
  return first ? first : null;
}

export function formatVisitorMessage(
  m: Pick<MessagesTable, 'id' | 'conversation_id' | 'direction' | 'author_type' | 'body' | 'html' | 'created_at'>,
  authorName: string | null,
  attachments: readonly VisitorAttachmentFields[] = [],
) {
  return {
    id: m.id,
    conversation_id: m.conversation_id,
    direction: m.direction,
    author: {
      type: m.author_type === 'contact' ? ('contact' as const) : ('team' as const),
      name: m.author_type === 'contact' ? null : visitorFacingName(authorName),
    },
    body: m.body,
    html: chatHtml(m.html),
    attachments: attachments.map(formatVisitorAttachment),
    created_at: m.created_at,
  };
}

export async function listVisitorConversations(ctx: Pick<Ctx, 'db'>, visitor: VisitorSession) {
  const ids = await visibleConversationIds(ctx.db, visitor.session);
  if (!ids.length) return [];
  const rows = await conversationsByLastMessage(ctx.db, ids, 100);
  const latest = await latestSentMessages(
    ctx.db,
    rows.map((c) => c.id),
  );
  return rows.map((c) => formatVisitorConversation(c, latest.get(c.id)));
}

/** What a visitor sees of a conversation, with the latest message they can read (never a note). */
function formatVisitorConversation(
  c: Pick<ConversationRow, 'id' | 'status' | 'subject' | 'created_at' | 'last_message_at'>,
  latest: Pick<MessagesTable, 'body' | 'author_type'> | undefined,
) {
  return {
    id: c.id,
    status: c.status,
    subject: c.subject,
    created_at: c.created_at,
    last_message_at: c.last_message_at,
    latest: latest ? { text: previewOf(latest.body), from: latest.author_type === 'contact' ? ('contact' as const) : ('team' as const) } : null,
  };
}

export async function listVisitorMessages(ctx: Pick<Ctx, 'db'>, visitor: VisitorSession, conversationId: string, opts: { after?: string; limit: number }) {
  await visibleConversation(ctx.db, visitor.session, conversationId);
  const rows = await sentMessagesOf(ctx.db, conversationId, opts);
  const names = await peopleNames(
    ctx.db,
    rows.map((r) => r.author_person_id),
  );
  const files = await attachmentsOf(
    ctx.db,
    rows.map((r) => r.id),
  );
  return rows.map((m) => formatVisitorMessage(m, m.author_person_id ? (names.get(m.author_person_id) ?? null) : null, files.get(m.id)));
}

/** A visitor's upload to one of its conversations, sent later with a message by id (attachment_ids). */
export async function uploadVisitorAttachment(
  ctx: Ctx,
  visitor: VisitorSession,
  conversationId: string,
  input: { filename?: string; contentType?: string; data: Readable | Buffer; address: string; declaredBytes?: number },
) {
  const conversation = await visibleConversation(ctx.db, visitor.session, conversationId);
  const who = { workspaceId: visitor.session.workspace_id, sessionId: visitor.session.id, address: input.address };
  const budget = await uploadBudget(ctx, who);
  if (budget.remaining <= 0 || (input.declaredBytes ?? 0) > budget.remaining) throw budget.exceeded();
  const largest = ctx.config.attachmentMaxBytes;
  let row: AttachmentRow;
  try {
    row = await storeUpload(ctx, conversation, { ...input, maxBytes: Math.min(largest, budget.remaining) });
  } catch (error) {
    if (error instanceof AppError && error.status === 413 && budget.remaining < largest) throw budget.exceeded();
    throw error;
  }
  await recordUpload(ctx, who, row);
  return formatVisitorAttachment(row);
}

/**
 * A file of a message the visitor may read: sent messages only (never notes, nor the team's or
 * anyone's uploads not sent yet), in a conversation of this session.
 */
export async function openVisitorAttachment(ctx: Ctx, visitor: VisitorSession, attachmentId: string): Promise<{ row: AttachmentRow; stream: Readable }> {
  const row = await attachmentOfSentMessage(ctx.db, visitor.session.workspace_id, attachmentId);
  if (!row || !(await visibleConversationIds(ctx.db, visitor.session)).includes(row.conversation_id)) throw notFound('attachment');
  return { row, stream: await openAttachment(ctx, row) };
}

function checkBody(body: string, attachmentIds?: string[]): string {
  if (!body.trim() && !attachmentIds?.length) throw invalid('body must not be empty');
  if (charCount(body) > MAX_VISITOR_MESSAGE_CHARS) throw invalid(`body must be at most ${MAX_VISITOR_MESSAGE_CHARS} characters`);
  return body;
}

async function sessionContact(db: Tx['db'], session: ContactSessionRow): Promise<ContactView> {
  const contact = await loadContactView(db, session.workspace_id, session.contact_id);
  if (!contact) throw unauthorized('this visitor session has ended');
  return contact;
}

export async function startVisitorConversation(
  ctx: Ctx,
  visitor: VisitorSession,
  input: { body: string; subject?: string },
  client?: Omit<VisitorRequest, 'channelId'>,
) {
  const body = checkBody(input.body);
  const { session, channel } = visitor;
  // The web visit this visitor came from (a property linked to the channel), found before the
  // transaction: it is read, never written, and conversation.created carries it.
  const found = client ? await findRequestVisit(ctx, { ...client, channelId: channel.id }) : null;
  const result = await retryOnUniqueViolation(() =>
    inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      const contact = await sessionContact(trx, session);
      const started = await startConversation(tx, {
        conversation: {
          workspaceId: session.workspace_id,
          inboxId: session.inbox_id,
          contactId: contact.contact.id,
          channelId: channel.id,
          source: 'chat',
          subject: input.subject?.trim() || null,
        },
        contact,
        message: { kind: 'message', direction: 'in', author: { type: 'contact', contactId: contact.contact.id }, body, html: visitorTextHtml(body) },
        visit: async (conversationId) => (found ? attachVisit(trx, conversationId, found, ctx.clock.now()) : null),
      });
      await trx.insertInto('contact_session_conversations').values({ session_id: session.id, conversation_id: started.conversation.id }).execute();
      return started;
    }),
  );
  if (found) recordConversationStarted(ctx, found);
  announceEvents(ctx);
  return { conversation: formatVisitorConversation(result.conversation, result.message), message: formatVisitorMessage(result.message, null) };
}

export async function postVisitorMessage(ctx: Ctx, visitor: VisitorSession, conversationId: string, input: { body: string; attachment_ids?: string[] }) {
  const body = checkBody(input.body, input.attachment_ids);
  const { session } = visitor;
  const result = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    let conversation = await visibleConversation(trx, session, conversationId);
    const contact = await sessionContact(trx, session);
    const author = { type: 'contact' as const, contactId: contact.contact.id };
    // A visitor writing again reopens a closed conversation, as a customer's mail does.
    if (conversation.status === 'closed') {
      ({ conversation } = await applyConversationChanges(tx, { conversation, patch: { status: 'open' }, author, reason: 'customer_reply' }));
    }
    const appended = await appendMessage(tx, {
      conversation,
      contact: conversation.contact_id === contact.contact.id ? contact : undefined,
      message: { kind: 'message', direction: 'in', author, body, html: visitorTextHtml(body), attachmentIds: input.attachment_ids },
    });
    await markUploadsSent(trx, input.attachment_ids ?? []);
    return appended;
  });
  announceEvents(ctx);
  return formatVisitorMessage(result.message, null, result.attachments);
}

/** The visitor is writing in one of its conversations: the panel shows it. */
export async function visitorTyping(ctx: Ctx, visitor: VisitorSession, conversationId: string, throttle: TypingThrottle) {
  const { session } = visitor;
  await visibleConversation(ctx.db, session, conversationId);
  return signalTyping(ctx, throttle, {
    workspaceId: session.workspace_id,
    inboxId: session.inbox_id,
    conversationId,
    typist: { type: 'contact', contactId: session.contact_id },
  });
}

/** Ends a session (the visitor signs out of the widget). */
export async function endContactSession(ctx: Pick<Ctx, 'db'>, sessionId: string): Promise<void> {
  await ctx.db.deleteFrom('contact_sessions').where('id', '=', sessionId).execute();
}

export function requireVisitorOrigin(visitor: VisitorSession, origin: string | undefined): void {
  try {
    checkOrigin(visitor.channel, origin);
  } catch {
    throw forbidden(`the origin ${origin} is not allowed for this chat channel`);
  }
}

/** Retention: sessions 7 days after their last use. */
export async function deleteExpiredContactSessions(ctx: Pick<Ctx, 'db'>, now: Date, batch: number): Promise<number> {
  return deleteContactSessions(ctx, ctx.db.selectFrom('contact_sessions').select('id').where('expires_at', '<=', iso(now)), batch);
}

/** Workspace deletion: every visitor session of the workspace. */
export async function deleteWorkspaceContactSessions(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  return deleteContactSessions(ctx, ctx.db.selectFrom('contact_sessions').select('id').where('workspace_id', '=', workspaceId), batch);
}

/** Deletes up to `batch` of the sessions `chosen` selects, with their conversation links; returns how many. */
async function deleteContactSessions(
  ctx: Pick<Ctx, 'db'>,
  chosen: SelectQueryBuilder<Database, 'contact_sessions', { id: string }>,
  batch: number,
): Promise<number> {
  const ids = (await chosen.limit(batch).execute()).map((r) => r.id);
  if (!ids.length) return 0;
  await ctx.db.deleteFrom('contact_session_conversations').where('session_id', 'in', ids).execute();
  const r = await ctx.db.deleteFrom('contact_sessions').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Whether the widget should ask the visitor for a rating of a (closed) conversation, and the rating given. */
export async function visitorRating(ctx: Pick<Ctx, 'db' | 'clock'>, visitor: VisitorSession, conversationId: string) {
  const conversation = await visibleConversation(ctx.db, visitor.session, conversationId);
  const rating = conversation.rating_score ? { score: conversation.rating_score, comment: conversation.rating_comment ?? null } : null;
  return { asked: !rating && (await openWidgetRequest(ctx, conversationId)), rating };
}

/** The visitor answers the rating request of one of its chat conversations (once). */
export async function rateVisitorConversation(ctx: Ctx, visitor: VisitorSession, conversationId: string, input: { score: number; comment?: string }) {
  await visibleConversation(ctx.db, visitor.session, conversationId);
  const rating = await answerInWidget(ctx, conversationId, input);
  return { asked: false, rating };
}
