// Sending a broadcast: a stored, resumable job (`broadcast.send`, one per broadcast) that mails
// the recipients through the channel's SMTP account over a small connection pool.
//
// Each round claims a batch of due recipients in one transaction: suppressed addresses (the
// workspace's unsubscribes, hard bounces and complaints) are marked and skipped, the rest is
// taken from today's allowance (see governance.ts) and marked `sending`. Results are written in
// batches (sent, failed, retried). A run yields after RUN_BUDGET_MS so other work gets its turn,
// and the job comes back. After a crash, recipients left `sending` are sent again first, with the
// same Message-ID (the window is the time between the server's 250 and the next result batch).
//
// Failures:
// - refused recipient (RCPT 5xx, or 5xx to the message): the recipient fails; 5.1.x answers (no
//   such mailbox) also suppress the address for the workspace.
// - recipient deferred (RCPT 4xx): retried after 5 and 30 minutes, then failed.
// - sender-level (connection, login, MAIL FROM, 4xx to the message): the batch goes back to
//   `pending` with its allowance returned; the job retries after 1, 5 and 15 minutes and, when
//   the fourth try in a row fails, the broadcast pauses with reason `sender_error`. A refused
//   login or a 5xx to MAIL FROM pauses at once, and so do 10 messages in a row refused with 5xx
//   after DATA (the server refuses everything we send). Throttling answers ("rate exceeded")
//   only slow down (10 s) and never pause. A channel whose Google or Microsoft sign-in was refused
//   pauses at once too (retrying cannot help until someone signs in again) and tells the managers
//   (src/mail-accounts/revoked.ts); a new sign-in does not resume it: a member does, when the
//   mail is still timely (a broadcast sent hours late is the team's call, not the server's).
// The pause detail is the SMTP server's answer with addresses removed.

import type { Transporter } from 'nodemailer';
import { type ChannelRow, findChannel } from '../channels/store.js';
import type { Ctx } from '../context.js';
import { announceEvents } from '../events/service.js';
import { findInbox } from '../inboxes/store.js';
import { describeSendError } from '../mail/outbound.js';
import { channelSender, channelTransport, hasSmtpAccount } from '../mail/transport.js';
import { SignInRequiredError } from '../mail-accounts/grants.js';
import { tellChannelSignInRequired } from '../mail-accounts/revoked.js';
import { mailerHeaders, tenantBlock } from '../mailer-tenants/sending.js';
import { addDigestLine } from '../operator-digest/service.js';
import { iso, MINUTE } from '../platform/clock.js';
import { enqueue, type JobKind, type JobOutcome } from '../platform/jobs.js';
import { findWorkspace } from '../workspaces/store.js';
import { addDayTotals, governanceRow, startOfNextUtcDay, utcDay } from './governance.js';
import { broadcastMessageId, isSesSmtpHost, linkKey, recipientToken, returnPath, unsubscribeUrl } from './links.js';
import { CLAIM_BATCH, type Claimed, claimBatch, type Failure, type Outcome, recordResults } from './recipients.js';
import { resolveSegmentAudience } from './segment-audience.js';
import { type BroadcastRow, findBroadcast, pauseBroadcasts, RUNNING } from './store.js';

export const BROADCAST_SEND_JOB = 'broadcast.send';
export const RESULT_BATCH = 200;
export const RUN_BUDGET_MS = 30_000;
export const POOL_CONNECTIONS = 5;
export const SENDER_RETRY_MS = [1 * MINUTE, 5 * MINUTE, 15 * MINUTE] as const;
export const THROTTLE_RETRY_MS = 10_000;
export const DATA_REJECTS_TO_PAUSE = 10;

/** The send job is due at runAt, or sooner if it was due later (a resumed broadcast left waiting for tomorrow or a retry). */
export async function scheduleSendJob(tx: Pick<Ctx, 'db' | 'clock'>, broadcastId: string, runAt: Date): Promise<void> {
  await enqueue(tx.db, tx.clock, {
    kind: BROADCAST_SEND_JOB,
    payload: { broadcastId },
    runAt,
    uniqueKey: `${BROADCAST_SEND_JOB}:${broadcastId}`,
    sooner: true,
  });
}

export function classifySendError(seq: number, error: unknown): Failure {
  const e = error as { code?: string; command?: string; responseCode?: number; response?: string; message?: string };
  const code = e.responseCode ?? 0;
  const text = describeSendError(error);
  const answer = `${e.response ?? ''} ${e.message ?? ''}`;
  // An address the client itself refuses (nodemailer's own check) is the recipient's failure.
  if (e.code === 'EENVELOPE' && e.command === 'API') return { ok: false, seq, level: 'recipient', permanent: true, suppress: false, error: text };
  if (e.command === 'RCPT TO') {
    return { ok: false, seq, level: 'recipient', permanent: code >= 500, suppress: code >= 500 && /\b5\.1\.\d{1,3}\b/.test(answer), error: text };
  }
  if (e.command === 'DATA' && code >= 500) return { ok: false, seq, level: 'data', error: text };
  const throttled = code >= 400 && code < 500 && /throttl|rate exceeded|too many/i.test(answer);
  const permanent = e.code === 'EAUTH' || error instanceof SignInRequiredError || (e.command === 'MAIL FROM' && code >= 500);
  return { ok: false, seq, level: 'sender', permanent, throttled, error: text };
}

/** Amazon SES answers `250 Ok <message id>`; that id comes back in its bounce and complaint notifications. */
export function providerMessageId(response: string | undefined): string | null {
  const m = /^250 Ok ([A-Za-z0-9-]{20,})\s*$/.exec(response ?? '');
  return m ? m[1] : null;
}

/** Pauses a broadcast that stopped itself, and tells the operator. */
export async function selfPause(
  ctx: Ctx,
  b: Pick<BroadcastRow, 'id' | 'workspace_id'>,
  reason: 'sender_error' | 'bounce_rate' | 'complaint_rate',
  detail: string,
): Promise<boolean> {
  const paused = await ctx.db.transaction().execute(async (trx) => {
    const ids = await pauseBroadcasts({ db: trx, clock: ctx.clock, metrics: ctx.metrics }, { workspaceId: b.workspace_id, broadcastId: b.id }, reason, detail);
    if (ids.length && reason !== 'sender_error') await addDayTotals(trx, b.workspace_id, utcDay(ctx.clock.now()), { rate_pauses: 1 });
    return ids.length > 0;
  });
  if (!paused) return false;
  ctx.log.warn('broadcast paused', { broadcast_id: b.id, workspace_id: b.workspace_id, reason, detail });
  const ws = await findWorkspace(ctx.db, b.workspace_id);
  await addDigestLine(ctx, {
    kind: 'broadcast_paused',
    workspaceId: b.workspace_id,
    text: `workspace ${JSON.stringify(ws?.name ?? '')} (${b.workspace_id}), broadcast ${b.id}: paused itself, reason ${reason} (${detail})`,
  });
  return true;
}

function personalize(text: string, url: string): string {
  return text.includes('{{unsubscribe_url}}') ? text.split('{{unsubscribe_url}}').join(url) : text;
}

async function sendRun(ctx: Ctx, b: BroadcastRow, channel: ChannelRow, inboxName: string, startedAt: number): Promise<JobOutcome> {
  const key = await linkKey(ctx);
  const tenantHeaders = await mailerHeaders(ctx, channel);
  const ses = isSesSmtpHost(channel.smtp_host);
  const from = channelSender(channel, inboxName);
  const transport: Transporter = channelTransport(ctx, channel, { pool: POOL_CONNECTIONS });
  const claimedDay = new Map<number, string>();
  const attempts = new Map<number, number>();
  let results: Outcome[] = [];
  let inflight = 0;
  let wake: (() => void) | undefined;
  let senderFailure: Extract<Outcome, { level: 'sender' }> | undefined;
  let senderError: unknown;
  let dataRejectsInRow = 0;
  let dataRejectError = '';
  let allowanceExhausted = false;
  let stopped = false;

  const dispatch = (r: Claimed) => {
    const token = recipientToken(key, b.id, r.seq);
    const url = unsubscribeUrl(ctx, token);
    const verp = returnPath(ctx, channel, token);
    inflight++;
    transport
      .sendMail({
        from,
        to: r.email,
        subject: b.subject,
        text: personalize(b.text, url),
        html: b.html ? personalize(b.html, url) : undefined,
        messageId: `<${broadcastMessageId(token, channel)}>`,
        envelope: verp ? { from: verp, to: [r.email] } : undefined,
        headers: {
          'List-Unsubscribe': `<${url}>`,
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
          Precedence: 'bulk',
          'X-Svc-Broadcast': token,
          ...(ses ? { 'X-SES-MESSAGE-TAGS': `svc-broadcast=${b.id}, svc-recipient=${r.seq}` } : {}),
          ...tenantHeaders,
        },
      })
      .then(
        (info: { response?: string }) => {
          dataRejectsInRow = 0;
          results.push({ ok: true, seq: r.seq, providerId: ses ? providerMessageId(info.response) : null });
        },
        (error: unknown) => {
          const outcome = classifySendError(r.seq, error);
          if (outcome.level === 'data') {
            dataRejectsInRow++;
            dataRejectError = outcome.error;
          } else if (outcome.level === 'recipient') dataRejectsInRow = 0;
          if (outcome.level === 'sender' && (!senderFailure || outcome.permanent)) {
            senderFailure = outcome;
            senderError = error;
          }
          results.push(outcome);
        },
      )
      .finally(() => {
        inflight--;
        wake?.();
      });
  };
  const waitUntil = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (done()) {
          wake = undefined;
          resolve();
        } else wake = check;
      };
      check();
    });
  const flush = async () => {
    const batch = results;
    results = [];
    await recordResults(ctx, b, batch as Outcome[], claimedDay, attempts);
    for (const r of batch) {
      claimedDay.delete(r.seq);
      attempts.delete(r.seq);
    }
  };

  try {
    let leftoversAfter: number | undefined = 0;
    for (;;) {
      const claim = await claimBatch(ctx, b, leftoversAfter);
      if (claim.stopped) {
        stopped = true;
        break;
      }
      if (leftoversAfter !== undefined) {
        if (claim.recipients.length === 0) {
          leftoversAfter = undefined;
          continue;
        }
        leftoversAfter = claim.recipients[claim.recipients.length - 1].seq;
      }
      allowanceExhausted = claim.allowanceExhausted;
      for (const r of claim.recipients) {
        claimedDay.set(r.seq, r.day);
        attempts.set(r.seq, r.attempts);
        dispatch(r);
      }
      if (claim.recipients.length === 0 || allowanceExhausted) break;
      // Keep the pool fed: claim the next batch while half of this one is still on its way.
      await waitUntil(() => inflight <= CLAIM_BATCH / 2 || !!senderFailure || dataRejectsInRow >= DATA_REJECTS_TO_PAUSE);
      if (results.length >= RESULT_BATCH) await flush();
      if (senderFailure || dataRejectsInRow >= DATA_REJECTS_TO_PAUSE) break;
      if (performance.now() - startedAt > RUN_BUDGET_MS) break;
    }
  } finally {
    await waitUntil(() => inflight === 0);
    transport.close();
    await flush();
  }

  const now = ctx.clock.now();
  if (stopped) return;
  const failure = senderFailure as Extract<Outcome, { level: 'sender' }> | undefined;
  if (failure) {
    if (failure.throttled && !failure.permanent) return { retryAt: new Date(now.getTime() + THROTTLE_RETRY_MS) };
    const row = await ctx.db
      .updateTable('broadcasts')
      .set((eb) => ({ sender_failures: eb('sender_failures', '+', 1) }))
      .where('id', '=', b.id)
      .returning('sender_failures')
      .executeTakeFirstOrThrow();
    ctx.log.warn('broadcast send failed, retrying', { broadcast_id: b.id, failures_in_row: row.sender_failures, error: failure.error });
    if (failure.permanent || row.sender_failures > SENDER_RETRY_MS.length) {
      await selfPause(ctx, b, 'sender_error', failure.error);
      if (senderError instanceof SignInRequiredError && (await tellChannelSignInRequired(ctx, channel.id, 'sending'))) announceEvents(ctx);
      return;
    }
    return { retryAt: new Date(now.getTime() + SENDER_RETRY_MS[row.sender_failures - 1]) };
  }
  if (dataRejectsInRow >= DATA_REJECTS_TO_PAUSE) {
    await selfPause(ctx, b, 'sender_error', `${DATA_REJECTS_TO_PAUSE} messages in a row refused: ${dataRejectError}`);
    return;
  }
  return afterRound(ctx, b, allowanceExhausted);
}

/** What comes next: more now, tomorrow's allowance, a deferred recipient's retry, or the end. */
async function afterRound(ctx: Ctx, b: BroadcastRow, allowanceExhausted: boolean): Promise<JobOutcome> {
  const now = ctx.clock.now();
  const nowText = iso(now);
  const open = await ctx.db
    .selectFrom('broadcast_recipients')
    .select((eb) => [
      eb.fn.countAll<number>().as('n'),
      eb.fn.min('retry_at').as('next_retry'),
      eb.fn.sum<number>(eb.case().when('retry_at', 'is', null).then(1).when('retry_at', '<=', nowText).then(1).else(0).end()).as('due'),
    ])
    .where('broadcast_id', '=', b.id)
    .where('status', 'in', ['pending', 'sending'])
    .executeTakeFirstOrThrow();
  if (Number(open.n) === 0) {
    const done = await ctx.db
      .updateTable('broadcasts')
      .set({ status: 'sent', finished_at: nowText, continues_at: null, updated_at: nowText })
      .where('id', '=', b.id)
      .where('status', '=', 'sending')
      .returning(['sent_count', 'failed_count', 'suppressed_count'])
      .executeTakeFirst();
    if (done)
      ctx.log.info('broadcast sent', {
        broadcast_id: b.id,
        workspace_id: b.workspace_id,
        sent: done.sent_count,
        failed: done.failed_count,
        suppressed: done.suppressed_count,
      });
    return;
  }
  if (Number(open.due ?? 0) > 0) {
    if (!allowanceExhausted) return { retryAt: now };
    const tomorrow = startOfNextUtcDay(now);
    await ctx.db
      .updateTable('broadcasts')
      .set({ continues_at: iso(tomorrow), updated_at: nowText })
      .where('id', '=', b.id)
      .where('status', '=', 'sending')
      .execute();
    ctx.log.info('broadcast waits for tomorrow’s allowance', { broadcast_id: b.id, workspace_id: b.workspace_id, continues_at: iso(tomorrow) });
    return { retryAt: tomorrow };
  }
  return { retryAt: new Date(open.next_retry as string) };
}

export function broadcastSendJob(ctx: Ctx): JobKind<{ broadcastId: string }> {
  return {
    kind: BROADCAST_SEND_JOB,
    // Longer than a run (RUN_BUDGET_MS plus the last batch's SMTP timeouts), so no second worker takes it over.
    leaseMs: 10 * MINUTE,
    backoffMs: (attempt) => Math.min(2 ** attempt * 1000, 10 * MINUTE),
    async run({ broadcastId }) {
      const startedAt = performance.now();
      const b = await findBroadcast(ctx.db, broadcastId);
      if (!b || !RUNNING.includes(b.status)) return;
      const now = ctx.clock.now();
      if (b.send_at && new Date(b.send_at) > now) return { retryAt: new Date(b.send_at) };
      const workspace = await findWorkspace(ctx.db, b.workspace_id);
      if (!workspace || workspace.deleted_at) return;
      if ((await governanceRow(ctx.db, b.workspace_id))?.status === 'suspended') {
        await ctx.db
          .transaction()
          .execute((trx) =>
            pauseBroadcasts(
              { db: trx, clock: ctx.clock, metrics: ctx.metrics },
              { workspaceId: b.workspace_id, broadcastId: b.id },
              'workspace_suspended',
              'suspended by the server operator',
            ),
          );
        return;
      }
      const channel = b.channel_id ? await findChannel(ctx.db, b.channel_id) : undefined;
      if (!channel || !hasSmtpAccount(channel)) {
        await selfPause(ctx, b, 'sender_error', 'the broadcast’s e-mail channel is gone or has no SMTP account');
        return;
      }
      const block = await tenantBlock(ctx, channel);
      if (block) {
        await ctx.db
          .transaction()
          .execute((trx) =>
            pauseBroadcasts({ db: trx, clock: ctx.clock, metrics: ctx.metrics }, { workspaceId: b.workspace_id, broadcastId: b.id }, 'mailer_tenant', block),
          );
        return;
      }
      if (b.segment_id && !b.segment_resolved_at) {
        const audience = await resolveSegmentAudience(ctx, b);
        if ('overLimit' in audience) {
          const limit = ctx.config.broadcasts.dailyRecipients;
          await selfPause(ctx, b, 'sender_error', `the segment gives ${audience.overLimit} recipients; a broadcast may have at most ${limit} on this server`);
          return;
        }
      }
      const nowText = iso(now);
      await ctx.db
        .updateTable('broadcasts')
        .set({ status: 'sending', started_at: b.started_at ?? nowText, continues_at: null, updated_at: nowText })
        .where('id', '=', b.id)
        .where('status', 'in', RUNNING)
        .execute();
      const inbox = await findInbox(ctx.db, b.inbox_id);
      return sendRun(ctx, { ...b, status: 'sending' }, channel, inbox?.name ?? '', startedAt);
    },
  };
}
