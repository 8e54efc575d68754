// Satisfaction ratings. When a person (a member or an API key; not retention, not a migration)
// closes a conversation of an inbox that asks for ratings, the customer is asked once: the
// reaction (./reaction.ts) writes a `rating_requests` row in the closing transaction (a unique index per conversation
// makes it once), with a `rating.request` job for e-mail conversations, which mails one-click
// links for 1–5; chat conversations show the question in the widget instead.
//
// A link is `/v1/ratings/<token>?score=N`: the token is the request id and an HMAC under a server
// key, so it cannot be made up, and it expires with the request (RATING_LINK_DAYS). Opening it
// records nothing (mail scanners prefetch links): the page preselects the score and records it
// with the optional comment on POST. A request is answered once; later answers are refused.
//
// The rating is kept on the conversation (the API's `rating`) and announced with the realtime-only
// `conversation.rated` event (the spec's webhook events have no rating change).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Access } from '../auth/access.js';
import { findChannel } from '../channels/store.js';
import { loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { formatConversation } from '../conversations/format.js';
import { setConversationRating, type Tx } from '../conversations/service.js';
import { closedInLatestChange, findConversation, firstMessage, labelsOf } from '../conversations/store.js';
import { deleteChosen } from '../db/bulk.js';
import { announceEvents, type NewEvent, recordEvent } from '../events/service.js';
import { customerLocale, type GreetingLocale } from '../greeting/rules.js';
import { resolveInbox } from '../inboxes/service.js';
import { describeSendError, replyReferences } from '../mail/outbound.js';
import { channelMailDomain, channelSender, channelTransport, hasSmtpAccount } from '../mail/transport.js';
import { SignInRequiredError } from '../mail-accounts/grants.js';
import { tellSignInRequired } from '../mail-accounts/revoked.js';
import { mailerHeaders } from '../mailer-tenants/sending.js';
import { DAY, iso, MINUTE } from '../platform/clock.js';
import { AppError, conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { enqueue, type JobKind, type JobRow } from '../platform/jobs.js';
import { charCount } from '../platform/text.js';
import { formatRatingSettings } from './format.js';
import { RATING_LINK_DAYS, RATING_REQUEST_JOB } from './reaction.js';

export const RATING_COMMENT_MAX_CHARS = 2000;
const RATING_SEND_ATTEMPTS = 5;
const LINK_KEY = 'rating_link_key';

export async function getRatingSettings(ctx: Pick<Ctx, 'db'>, access: Access, inboxRef: string) {
  const inbox = await resolveInbox(ctx, access.workspaceId, inboxRef);
  const row = await ctx.db.selectFrom('inbox_rating_settings').selectAll().where('inbox_id', '=', inbox.id).executeTakeFirst();
  return { inboxId: inbox.id, settings: formatRatingSettings(row) };
}

export async function setRatingSettings(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, inboxId: string, input: { enabled: boolean }) {
  const now = iso(ctx.clock.now());
  const row = { inbox_id: inboxId, workspace_id: access.workspaceId, enabled: input.enabled ? 1 : 0, updated_at: now };
  await ctx.db
    .insertInto('inbox_rating_settings')
    .values(row)
    .onConflict((oc) => oc.column('inbox_id').doUpdateSet({ enabled: row.enabled, updated_at: now }))
    .execute();
  return formatRatingSettings(row);
}

// ---- tokens ----

const keys = new WeakMap<object, Promise<Buffer>>();

/** The server's rating link key: random, created once, stored sealed under the master key. */
function ratingKey(ctx: Pick<Ctx, 'db' | 'sealer'>): Promise<Buffer> {
  let key = keys.get(ctx.sealer);
  if (!key) {
    key = (async () => {
      await ctx.db
        .insertInto('server_meta')
        .values({ key: LINK_KEY, value: ctx.sealer.seal(randomBytes(32).toString('base64')) })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      const row = await ctx.db.selectFrom('server_meta').select('value').where('key', '=', LINK_KEY).executeTakeFirstOrThrow();
      return Buffer.from(ctx.sealer.open(row.value), 'base64');
    })();
    key.catch(() => keys.delete(ctx.sealer));
    keys.set(ctx.sealer, key);
  }
  return key;
}

const mac = (key: Buffer, requestId: string) => createHmac('sha256', key).update(`rating.${requestId}`).digest('base64url').slice(0, 32);

export async function ratingToken(ctx: Pick<Ctx, 'db' | 'sealer'>, requestId: string): Promise<string> {
  return `${requestId}.${mac(await ratingKey(ctx), requestId)}`;
}

/** The request a token names; 404 for anything malformed, forged or unknown (all look alike). */
async function requestOfToken(ctx: Pick<Ctx, 'db' | 'sealer'>, token: string) {
  const m = /^(rr_[0-9a-z]{26})\.([A-Za-z0-9_-]{32})$/.exec(token);
  if (!m) throw notFound('rating request');
  const expected = Buffer.from(mac(await ratingKey(ctx), m[1]));
  if (!timingSafeEqual(expected, Buffer.from(m[2]))) throw notFound('rating request');
  const request = await ctx.db.selectFrom('rating_requests').selectAll().where('id', '=', m[1]).executeTakeFirst();
  if (!request) throw notFound('rating request');
  return request;
}

export function ratingUrl(ctx: Pick<Ctx, 'config'>, token: string, score: number): string {
  return `${ctx.config.publicUrl}/v1/ratings/${token}?score=${score}`;
}

// ---- asking ----

const TEXT: Record<GreetingLocale, { subject: string; intro: string; scale: string; labels: string[]; page: Record<string, string> }> = {
  en: {
    subject: 'How did we do?',
    intro: 'Your conversation with us was closed. How satisfied are you with our answer? One click is enough:',
    scale: '1 = very unsatisfied, 5 = very satisfied',
    labels: ['1 – very unsatisfied', '2 – unsatisfied', '3 – neutral', '4 – satisfied', '5 – very satisfied'],
    page: {
      title: 'Rate our answer',
      question: 'How satisfied are you with our answer?',
      comment: 'Anything you want to tell us? (optional)',
      send: 'Send rating',
      thanks: 'Thank you! Your rating was recorded.',
      already: 'This rating was already recorded. Thank you!',
      expired: 'This rating link has expired.',
    },
  },
  tr: {
    subject: 'Yanıtımızı değerlendirin',
    intro: 'Bizimle yazışmanız kapatıldı. Yanıtımızdan ne kadar memnun kaldınız? Tek tıklama yeterli:',
    scale: '1 = hiç memnun değilim, 5 = çok memnunum',
    labels: ['1 – hiç memnun değilim', '2 – memnun değilim', '3 – kararsızım', '4 – memnunum', '5 – çok memnunum'],
    page: {
      title: 'Yanıtımızı değerlendirin',
      question: 'Yanıtımızdan ne kadar memnun kaldınız?',
      comment: 'Eklemek istediğiniz bir şey var mı? (isteğe bağlı)',
      send: 'Değerlendirmeyi gönder',
      thanks: 'Teşekkürler! Değerlendirmeniz kaydedildi.',
      already: 'Bu değerlendirme zaten kaydedildi. Teşekkürler!',
      expired: 'Bu değerlendirme bağlantısının süresi doldu.',
    },
  },
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

async function requestLocale(ctx: Pick<Ctx, 'db'>, request: { workspace_id: string; inbox_id: string; contact_id: string }): Promise<GreetingLocale> {
  const inbox = await resolveInbox(ctx, request.workspace_id, request.inbox_id).catch(() => undefined);
  const contact = await loadContactView(ctx.db, request.workspace_id, request.contact_id);
  return customerLocale(inbox?.locale ?? 'en', contact?.contact.attributes);
}

class RatingMailFailure extends Error {}

/** Mails the request: threaded under the conversation's latest mail, Auto-Submitted: auto-generated. */
async function mailRatingRequest(ctx: Ctx, requestId: string): Promise<void> {
  const request = await ctx.db.selectFrom('rating_requests').selectAll().where('id', '=', requestId).executeTakeFirst();
  if (!request || request.status !== 'pending') return;
  const conversation = await findConversation(ctx.db, request.workspace_id, request.conversation_id);
  if (!conversation) throw new RatingMailFailure('the conversation no longer exists');
  const channel = conversation.channel_id ? await findChannel(ctx.db, conversation.channel_id) : undefined;
  if (!channel || !hasSmtpAccount(channel)) throw new RatingMailFailure('the conversation has no e-mail channel with an SMTP account');
  const first = await firstMessage(ctx.db, conversation.id);
  const to = first?.mail_reply_to;
  if (!to) throw new RatingMailFailure('the customer has no e-mail address');
  const inbox = await resolveInbox(ctx, conversation.workspace_id, conversation.inbox_id);
  const locale = await requestLocale(ctx, request);
  const t = TEXT[locale];
  const token = await ratingToken(ctx, request.id);
  const links = [1, 2, 3, 4, 5].map((n) => ({ n, url: ratingUrl(ctx, token, n), label: t.labels[n - 1] }));
  const references = await replyReferences(ctx.db, conversation.id);
  const from = channelSender(channel, inbox.name);
  const headers: Record<string, string> = { ...(await mailerHeaders(ctx, channel)), 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All' };
  const transport = channelTransport(ctx, channel);
  try {
    await transport.sendMail({
      from: { name: from.name, address: from.address },
      to,
      subject: conversation.subject ? `${t.subject} (${conversation.subject})` : t.subject,
      text: `${t.intro}\n\n${links.map((l) => `${l.label}: ${l.url}`).join('\n')}\n\n${t.scale}\n`,
      html: ratingMailHtml(t, links),
      messageId: `<${request.id}@${channelMailDomain(channel)}>`,
      inReplyTo: references.length ? `<${references[references.length - 1]}>` : undefined,
      references: references.length ? references.map((r) => `<${r}>`).join(' ') : undefined,
      headers,
    });
  } finally {
    transport.close();
  }
}

/**
 * The HTML part: the five answers as buttons (a table with inline styles, what mail clients keep),
 * so no long link is shown; the text part keeps the links for clients without HTML.
 */
export function ratingMailHtml(t: { intro: string; scale: string }, links: { n: number; url: string; label: string }[]): string {
  const button = (l: { url: string; label: string }) =>
    `<td style="padding:4px"><a href="${escapeHtml(l.url)}" style="display:block;padding:10px 14px;border-radius:6px;background:#1d4ed8;color:#ffffff;text-decoration:none;font:600 15px/1.3 system-ui,sans-serif;text-align:center">${escapeHtml(l.label)}</a></td>`;
  return `<div style="font:15px/1.5 system-ui,sans-serif;color:#1a1a1a;max-width:560px"><p>${escapeHtml(t.intro)}</p><table role="presentation" cellspacing="0" cellpadding="0" style="border-collapse:collapse;width:100%"><tbody>${links.map((l) => `<tr>${button(l)}</tr>`).join('')}</tbody></table><p style="color:#555;font-size:13px">${escapeHtml(t.scale)}</p></div>`;
}

export function ratingRequestJob(ctx: Ctx): JobKind<{ requestId: string }> {
  return {
    kind: RATING_REQUEST_JOB,
    leaseMs: 5 * MINUTE,
    async run({ requestId }, job: JobRow) {
      try {
        await mailRatingRequest(ctx, requestId);
      } catch (error) {
        const reason = describeSendError(error);
        // A refused sign-in fails at once (retrying cannot help): the managers are told, and a new
        // sign-in sends the request again (src/mail-accounts/retry-job.ts).
        const signIn = error instanceof SignInRequiredError ? error : undefined;
        const final = error instanceof RatingMailFailure || !!signIn || job.attempts >= RATING_SEND_ATTEMPTS;
        ctx.log.warn('rating request mail failed', { rating_request_id: requestId, attempt: job.attempts, final, error: reason });
        if (!final) return { retryAt: new Date(ctx.clock.now().getTime() + 5 * MINUTE * job.attempts) };
        await ctx.db.transaction().execute(async (trx) => {
          const failed = await trx
            .updateTable('rating_requests')
            .set({ status: 'failed', error: reason })
            .where('id', '=', requestId)
            .where('status', '=', 'pending')
            .returning('conversation_id')
            .executeTakeFirst();
          if (failed && signIn) await tellSignInRequired({ db: trx, clock: ctx.clock }, signIn, failed.conversation_id);
        });
        if (signIn) announceEvents(ctx);
        return;
      }
      await ctx.db.updateTable('rating_requests').set({ status: 'sent' }).where('id', '=', requestId).where('status', '=', 'pending').execute();
    },
  };
}

/**
 * After a new sign-in of the channel (src/mail-accounts/retry-job.ts): its rating requests that
 * failed with an error like `errorLike` and whose links still work are mailed again (a new job each).
 */
export async function retryRatingRequestsOfChannel(ctx: Ctx, channelId: string, errorLike: string): Promise<number> {
  const rows = await ctx.db
    .selectFrom('rating_requests')
    .innerJoin('conversations', 'conversations.id', 'rating_requests.conversation_id')
    .select('rating_requests.id')
    .where('conversations.channel_id', '=', channelId)
    .where('rating_requests.status', '=', 'failed')
    .where('rating_requests.error', 'like', errorLike)
    .where('rating_requests.expires_at', '>', iso(ctx.clock.now()))
    .execute();
  for (const { id } of rows) {
    await ctx.db.transaction().execute(async (trx) => {
      const back = await trx
        .updateTable('rating_requests')
        .set({ status: 'pending', error: null })
        .where('id', '=', id)
        .where('status', '=', 'failed')
        .executeTakeFirst();
      if (Number(back.numUpdatedRows) === 1)
        await enqueue(trx, ctx.clock, { kind: RATING_REQUEST_JOB, payload: { requestId: id }, uniqueKey: `${RATING_REQUEST_JOB}:${id}` });
    });
  }
  if (rows.length) ctx.jobs.wake();
  return rows.length;
}

// ---- answering ----

export function checkScore(score: unknown): number {
  const n = typeof score === 'string' && /^[1-5]$/.test(score.trim()) ? Number(score) : score;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 5) throw invalid('score must be an integer from 1 to 5');
  return n;
}

function checkComment(comment: string | undefined | null): string | null {
  const c = (comment ?? '').trim();
  if (charCount(c) > RATING_COMMENT_MAX_CHARS) throw invalid(`comment must be at most ${RATING_COMMENT_MAX_CHARS} characters`);
  return c || null;
}

export type RatingPageState = 'open' | 'answered' | 'expired';

/** What the rating page shows for a token (nothing is recorded). */
export async function ratingPage(ctx: Pick<Ctx, 'db' | 'sealer' | 'clock'>, token: string) {
  const request = await requestOfToken(ctx, token);
  const locale = await requestLocale(ctx, request);
  const state: RatingPageState = request.status === 'answered' ? 'answered' : request.expires_at <= iso(ctx.clock.now()) ? 'expired' : 'open';
  return { state, locale, text: TEXT[locale] };
}

async function recordRating(ctx: Ctx, requestId: string, input: { score: number; comment: string | null }): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.transaction().execute(async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    // The status check in the update makes the request single-use, also for two answers at once.
    const taken = await trx
      .updateTable('rating_requests')
      .set({ status: 'answered', answered_at: iso(now) })
      .where('id', '=', requestId)
      .where('status', '!=', 'answered')
      .where('expires_at', '>', iso(now))
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) !== 1) {
      const request = await trx.selectFrom('rating_requests').select(['status']).where('id', '=', requestId).executeTakeFirstOrThrow();
      if (request.status === 'answered') throw conflict('this rating was already recorded', 'rating_already_recorded');
      throw new AppError(410, 'rating_expired', 'this rating link has expired');
    }
    const request = await trx.selectFrom('rating_requests').selectAll().where('id', '=', requestId).executeTakeFirstOrThrow();
    const conversation = await setConversationRating(tx, request.workspace_id, request.conversation_id, {
      score: input.score,
      comment: input.comment,
      ratedAt: iso(now),
    });
    if (!conversation) return;
    const labels = (await labelsOf(trx, [conversation.id])).get(conversation.id) ?? [];
    await recordEvent(tx, {
      workspaceId: conversation.workspace_id,
      inboxId: conversation.inbox_id,
      contactId: conversation.contact_id,
      type: 'conversation.rated',
      occurredAt: now,
      data: { conversation: formatConversation(conversation, labels), rating: { score: input.score, comment: input.comment, rated_at: iso(now) } },
      webhook: false,
    });
  });
  announceEvents(ctx);
}

/** POST of the rating page: records the score and comment once. */
export async function answerRatingLink(ctx: Ctx, token: string, input: { score: unknown; comment?: string | null }) {
  const score = checkScore(input.score);
  const comment = checkComment(input.comment);
  const request = await requestOfToken(ctx, token);
  await recordRating(ctx, request.id, { score, comment });
  return { score, comment };
}

/** The chat widget's answer to a chat conversation's request (the session must read the conversation). */
export async function answerInWidget(ctx: Ctx, conversationId: string, input: { score: unknown; comment?: string | null }) {
  const score = checkScore(input.score);
  const comment = checkComment(input.comment);
  const request = await ctx.db
    .selectFrom('rating_requests')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('via', '=', 'chat')
    .executeTakeFirst();
  if (!request) throw conflict('this conversation has no rating request', 'no_rating_request');
  await recordRating(ctx, request.id, { score, comment });
  return { score, comment };
}

/** Whether the widget should ask: a chat conversation's request not answered and not expired. */
export async function openWidgetRequest(ctx: Pick<Ctx, 'db' | 'clock'>, conversationId: string): Promise<boolean> {
  const request = await ctx.db
    .selectFrom('rating_requests')
    .select(['status', 'expires_at'])
    .where('conversation_id', '=', conversationId)
    .where('via', '=', 'chat')
    .executeTakeFirst();
  return !!request && request.status !== 'answered' && request.expires_at > iso(ctx.clock.now());
}

/** The rating page (GET shows, POST records): a small form page of its own, no script. */
export function renderRatingPage(view: { state: RatingPageState | 'thanks'; locale: GreetingLocale; score?: number; error?: string; action: string }): string {
  const t = TEXT[view.locale].page;
  const labels = TEXT[view.locale].labels;
  let body: string;
  if (view.state === 'thanks') body = `<p role="status">${escapeHtml(t.thanks)}</p>`;
  else if (view.state === 'answered') body = `<p>${escapeHtml(t.already)}</p>`;
  else if (view.state === 'expired') body = `<p>${escapeHtml(t.expired)}</p>`;
  else {
    const options = labels
      .map(
        (label, i) =>
          `<label><input type="radio" name="score" value="${i + 1}"${view.score === i + 1 ? ' checked' : ''} required> ${escapeHtml(label)}</label>`,
      )
      .join('');
    body = `${view.error ? `<p role="alert">${escapeHtml(view.error)}</p>` : ''}<form method="post" action="${escapeHtml(view.action)}"><fieldset><legend>${escapeHtml(t.question)}</legend>${options}</fieldset><label for="comment">${escapeHtml(t.comment)}</label><textarea id="comment" name="comment" maxlength="${RATING_COMMENT_MAX_CHARS}" rows="4"></textarea><button type="submit">${escapeHtml(t.send)}</button></form>`;
  }
  return `<!doctype html><html lang="${view.locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(t.title)}</title><style>${PAGE_CSS}</style></head><body><main><h1>${escapeHtml(t.title)}</h1>${body}</main></body></html>`;
}

const PAGE_CSS =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:1rem;color:#1a1a1a;background:#fff}main{max-width:32rem;margin:0 auto}fieldset{border:0;padding:0;margin:0 0 1rem}legend{font-weight:600;margin-bottom:.5rem}fieldset label{display:block;padding:.4rem 0}textarea{display:block;width:100%;box-sizing:border-box;margin:.25rem 0 1rem;font:inherit}button{font:inherit;padding:.5rem 1rem;background:#1d4ed8;color:#fff;border:0;border-radius:4px}@media (prefers-color-scheme:dark){body{background:#111;color:#eee}}';

/** The hash of the page's style element, for its CSP (no inline style allowed otherwise). */
export const RATING_PAGE_STYLE_HASH = `'sha256-${createHash('sha256').update(PAGE_CSS).digest('base64')}'`;

/** Workspace deletion step (the ratings on conversations go with them). */
export async function deleteWorkspaceRatingRequests(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  return deleteChosen(ctx.db, 'rating_requests', 'id', ctx.db.selectFrom('rating_requests').select('id').where('workspace_id', '=', workspaceId), batch);
}
