// Switching delivery and finishing (spec: Migration feature rules › Switching delivery, Password
// handling): the ways to route mail to the server, the test message (probe) and its arrival by
// the new route, the forwarding-confirmation mail of a provider, the quiet period, finish (with
// force), and the sync limit. Every way a migration ends here deletes its password at once.
import type { Access } from '../../auth/access.js';
import { activeForwardingAddress } from '../../channels/service.js';
import { type ChannelRow, findChannel } from '../../channels/store.js';
import type { Ctx } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { announceEvents, recordEvent } from '../../events/service.js';
import type { MessageHandler } from '../../mail/handlers.js';
import type { InboundMail } from '../../mail/parse.js';
import type { MailTarget } from '../../mail/recipients.js';
import { DAY, HOUR, iso, MINUTE } from '../../platform/clock.js';
import { AppError, conflict } from '../../platform/errors.js';
import { randomText } from '../../platform/ids.js';
import type { DbWindow } from '../../platform/rate-limit.js';
import { formatMigration } from '../format.js';
import { stateError } from '../states.js';
import {
  type Actor,
  actorOf,
  checkLogWindow,
  getMigration,
  loadProgress,
  lockMigration,
  logActivity,
  type MigrationRow,
  recordMigrationUpdated,
  SYSTEM,
  saveMigration,
  type Tx,
} from '../store.js';
import { type HandOver, handOverReading, requirePossible, startHandedOverReader } from './handover.js';

/** Test messages per migration: 3 per 10 minutes (429 beyond). */
export const PROBE_WINDOW: DbWindow = { limit: 3, windowMs: 10 * MINUTE, what: 'test messages' };
/** The test message's Message-ID: `svc-migration-probe.<migration id>.<token>@<domain>`. */
export const PROBE_PREFIX = 'svc-migration-probe.';
export const SYNC_POLL_SECONDS = 120;

export type EndReason = 'quiet_period' | 'finish' | 'finish_forced' | 'sync_limit';

export function isProbeMail(rfcId: string | null | undefined): boolean {
  return !!rfcId && rfcId.startsWith(PROBE_PREFIX);
}

function probeMigrationId(rfcId: string | null): string | undefined {
  if (!isProbeMail(rfcId)) return undefined;
  const m = /^svc-migration-probe\.(mig_[0-9a-z]+)\./.exec(rfcId!);
  return m?.[1];
}

/** The columns that end a migration: completed, the password deleted, the audit period starts. */
export function completion(now: Date, reason: EndReason): Partial<MigrationRow> {
  return {
    state: 'completed',
    password_sealed: null,
    ended_at: iso(now),
    end_reason: reason,
    resume_state: null,
    attention_reason: null,
    attention_message: null,
    attention_retry_at: null,
  };
}

/** When the quiet period after the test message passes (null: no test message arrived yet). */
export function quietPeriodEnd(ctx: Pick<Ctx, 'config'>, m: Pick<MigrationRow, 'probe_arrived_at' | 'last_old_only_at'>): Date | null {
  if (!m.probe_arrived_at) return null;
  const from = m.last_old_only_at && m.last_old_only_at > m.probe_arrived_at ? m.last_old_only_at : m.probe_arrived_at;
  return new Date(new Date(from).getTime() + ctx.config.migration.quietHours * HOUR);
}

/** When the sync stops on its own: SVC_MIGRATION_SYNC_MAX_DAYS after the copy ended. */
export function syncLimitEnd(ctx: Pick<Ctx, 'config'>, m: Pick<MigrationRow, 'copy_ended_at'>): Date | null {
  return m.copy_ended_at ? new Date(new Date(m.copy_ended_at).getTime() + ctx.config.migration.syncMaxDays * DAY) : null;
}

/** Whether a syncing migration ends now by itself, and why. */
export function endingNow(ctx: Pick<Ctx, 'config'>, m: MigrationRow, now: Date): EndReason | undefined {
  const limit = syncLimitEnd(ctx, m);
  if (limit && now >= limit) return 'sync_limit';
  const quiet = quietPeriodEnd(ctx, m);
  if (quiet && now >= quiet) return 'quiet_period';
  return undefined;
}

/** Ends a syncing migration by itself (quiet period or sync limit); false when it was not syncing any more. */
export async function endBySystem(ctx: Ctx, migrationId: string, reason: EndReason): Promise<boolean> {
  let handed: HandOver | undefined;
  const saved = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const current = await lockMigration(trx, migrationId);
    const syncing = current?.state === 'syncing' || (current?.state === 'needs_attention' && current.resume_state === 'syncing');
    if (!current || !syncing || (current.state === 'needs_attention' && reason !== 'sync_limit')) return undefined;
    handed = await handOverReading(ctx, tx, current, SYSTEM);
    const next = await saveMigration(tx, current, { ...completion(ctx.clock.now(), reason), ...handed.set });
    await logActivity(tx, next, SYSTEM, reason === 'sync_limit' ? 'sync_limit_reached' : 'completed', { reason, credentials_deleted: true });
    await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, next.id)) });
    return next;
  });
  if (!saved) return false;
  startHandedOverReader(ctx, handed);
  ctx.log.info(reason === 'sync_limit' ? 'migration sync limit reached' : 'migration completed', { migration_id: migrationId, reason });
  announceEvents(ctx);
  return true;
}

export type ActRunner = (
  ctx: Ctx,
  access: Access,
  id: string,
  action: 'probe' | 'finish' | 'remove_history',
  change: (m: MigrationRow, tx: Tx) => Promise<{ set: Partial<MigrationRow>; detail?: Record<string, unknown>; log?: string } | undefined>,
) => Promise<unknown>;

/** POST …/probe: mails the old mailbox a short message from the server's own account. */
export async function sendProbe(ctx: Ctx, access: Access, id: string, act: ActRunner) {
  const m = await getMigration(ctx.db, access.workspaceId, id);
  const smtp = ctx.config.smtp;
  const token = randomText(20);
  let rfcId = '';
  const answer = await act(ctx, access, id, 'probe', async (current, tx) => {
    if (!smtp) throw conflict('this server has no SMTP account of its own (SVC_SMTP_HOST) to send the test message from', 'smtp_not_configured');
    if (!current.source_address) throw conflict('the migration has no source_address to send the test message to', 'conflict');
    await checkLogWindow(tx, current.id, 'test_message_sent', PROBE_WINDOW);
    rfcId = `${PROBE_PREFIX}${current.id}.${token}@${smtp.from.slice(smtp.from.lastIndexOf('@') + 1)}`;
    // The row first: a test message that arrives is recognized even if the answer is lost.
    return { set: { probe_token: token, probe_sent_at: iso(ctx.clock.now()) }, log: 'test_message_sent' };
  });
  const sent = await ctx.systemMail.send(
    {
      to: m.source_address!,
      subject: 'Test message: is mail reaching the new support inbox?',
      text: [
        'This is a test message from your support server, sent while your mailbox is being moved.',
        'When it reaches the server by the new route (forwarding or the new MX records), the migration records how it came.',
        'You can ignore or delete it.',
      ].join('\n'),
      messageId: `<${rfcId}>`,
      headers: { 'X-Svc-Migration-Probe': m.id },
    },
    'migration_probe',
  );
  if (!sent) {
    await inTransaction(ctx.db, async (trx) => logActivity({ db: trx, clock: ctx.clock }, m, SYSTEM, 'test_message_failed'));
    throw new AppError(502, 'probe_not_sent', 'the test message could not be sent through the server’s SMTP account; the server log says why');
  }
  return answer;
}

/**
 * POST …/finish: completes a syncing migration; before a test message arrived only with force.
 * keep_reading (when given) is the choice to keep reading the mailbox live, saved with the completion.
 */
export async function finishMigration(ctx: Ctx, access: Access, id: string, input: { force?: boolean; keep_reading?: boolean }, act: ActRunner) {
  let handed: HandOver | undefined;
  const answer = await act(ctx, access, id, 'finish', async (current, tx) => {
    const m = input.keep_reading === undefined ? current : { ...current, keep_reading: input.keep_reading ? 1 : 0 };
    if (!m.probe_arrived_at && !input.force) {
      throw stateError(
        m,
        'finish',
        'finish is refused until a test message arrived by the new route (POST …/probe); send {"force": true} to finish without checking',
      );
    }
    const reason: EndReason = m.probe_arrived_at ? 'finish' : 'finish_forced';
    if (input.keep_reading) await requirePossible(tx.db, m);
    handed = await handOverReading(ctx, tx, m, actorOf(access));
    return {
      set: { ...completion(ctx.clock.now(), reason), keep_reading: m.keep_reading, ...handed.set },
      log: 'finished',
      detail: { forced: reason === 'finish_forced', credentials_deleted: true },
    };
  });
  startHandedOverReader(ctx, handed);
  return answer;
}

/**
 * The ways to route mail to the server (only MX without SVC_FORWARDING_DOMAIN). MX names the domain
 * of the mailbox being moved (its mail is what must arrive here), else the channel's.
 */
export function routingOptions(ctx: Pick<Ctx, 'config'>, channel: ChannelRow | undefined, sourceAddress?: string | null) {
  const forwarding = channel ? activeForwardingAddress(channel, ctx.config.forwardingDomain) : null;
  const moved = sourceAddress ?? channel?.address;
  const domain = moved?.includes('@') ? moved.slice(moved.lastIndexOf('@') + 1).toLowerCase() : null;
  const ways: Record<string, unknown>[] = [];
  if (forwarding) {
    ways.push({
      way: 'forwarding',
      address: forwarding,
      who: 'the mailbox owner',
      old_mailbox_keeps_a_copy: true,
      how: `In the old mailbox's settings, forward all mail to ${forwarding}. If the provider sends a confirmation mail, its code and link appear here (migration.forwarding_confirmation).`,
    });
    ways.push({
      way: 'server_routing',
      address: forwarding,
      who: 'a mail server admin',
      old_mailbox_keeps_a_copy: true,
      how: `On the mail server, route a copy of the mailbox's mail to ${forwarding}.`,
    });
  }
  ways.push({
    way: 'mx',
    domain,
    who: 'whoever controls DNS',
    old_mailbox_keeps_a_copy: false,
    how: `Point the MX records of ${domain ?? 'the domain'} (a domain or subdomain used only for support) at this server's SMTP ingress.`,
  });
  return { forwarding_address: forwarding, ways };
}

/** What a migration shows about switching delivery, finishing and removing history. */
export async function switchingView(ctx: Pick<Ctx, 'db' | 'config'>, m: MigrationRow, removalCount: (m: MigrationRow) => Promise<number>) {
  const channel = m.channel_id ? await findChannel(ctx.db, m.channel_id) : undefined;
  let sync = null;
  if (m.copy_ended_at) {
    const counts = await ctx.db
      .selectFrom('mailbox_migration_items')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('migration_id', '=', m.id)
      .where('new_mail', '=', 1)
      .groupBy('status')
      .execute();
    const n = (s: string) => Number(counts.find((c) => c.status === s)?.n ?? 0);
    const quiet = quietPeriodEnd(ctx, m);
    const limit = syncLimitEnd(ctx, m);
    sync = {
      history_until: m.copy_ended_at,
      poll_seconds: SYNC_POLL_SECONDS,
      last_polled_at: m.sync_polled_at,
      new_mail_from_old_mailbox: n('copied'),
      arrived_both_ways: n('duplicate'),
      last_only_in_old_mailbox_at: m.last_old_only_at,
      quiet_period_hours: ctx.config.migration.quietHours,
      completes_at: m.state === 'syncing' && quiet ? iso(quiet) : null,
      stops_at: m.state === 'syncing' && limit ? iso(limit) : null,
    };
  }
  const removable = m.state === 'completed' || m.state === 'cancelled';
  return {
    routing: routingOptions(ctx, channel, m.source_address),
    test_message: { sent_at: m.probe_sent_at, arrived_at: m.probe_arrived_at, route: m.probe_route },
    sync,
    end_reason: m.end_reason,
    remove_history:
      removable || m.removal
        ? { confirm_count: removable ? await removalCount(m) : null, ...(m.removal ? (JSON.parse(m.removal) as Record<string, unknown>) : {}) }
        : null,
  };
}

/** The ingress's message handler for mail that belongs to migrations. */
export const migrationMailHandler: MessageHandler = { name: 'mailbox-migration', take: (ctx, mail, targets) => takeMigrationMail(ctx, mail, targets) };

/**
 * Inbound mail that belongs to migrations rather than to conversations: a test message that came
 * back by the new route, and a provider's forwarding-confirmation mail at a forwarding address.
 * Returns the targets the mail still goes to as a message.
 */
async function takeMigrationMail(ctx: Ctx, mail: InboundMail, targets: MailTarget[]): Promise<MailTarget[]> {
  const probeOf = probeMigrationId(mail.messageId);
  if (probeOf) {
    const remaining: MailTarget[] = [];
    for (const target of targets) {
      const taken = await recordProbeArrival(ctx, probeOf, target);
      if (!taken) remaining.push(target);
    }
    return remaining;
  }
  if (!targets.some((t) => t.via === 'forwarding')) return targets;
  const confirmation = forwardingConfirmation(mail);
  if (!confirmation) return targets;
  const remaining: MailTarget[] = [];
  for (const target of targets) {
    if (target.via !== 'forwarding') {
      remaining.push(target);
      continue;
    }
    const migrations = await ctx.db
      .selectFrom('mailbox_migrations')
      .selectAll()
      .where('channel_id', '=', target.channel.id)
      .where('deleted_at', 'is', null)
      .where('state', 'not in', ['completed', 'cancelled', 'removing', 'removed'])
      .execute();
    if (migrations.length === 0) {
      remaining.push(target);
      continue;
    }
    await inTransaction(ctx.db, async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      for (const m of migrations) {
        await recordEvent(tx, {
          workspaceId: m.workspace_id,
          type: 'migration.forwarding_confirmation',
          occurredAt: ctx.clock.now(),
          data: {
            migration_id: m.id,
            channel_id: target.channel.id,
            forwarding_address: target.channel.forwarding_address,
            from: mail.from.address,
            subject: mail.subject,
            code: confirmation.code,
            link: confirmation.link,
          },
          webhook: false,
        });
        await logActivity(tx, m, SYSTEM, 'forwarding_confirmation_received', {
          from: mail.from.address,
          has_code: !!confirmation.code,
          has_link: !!confirmation.link,
        });
      }
    });
    ctx.log.info('forwarding confirmation mail received', { channel_id: target.channel.id, migrations: migrations.length });
    if (!confirmation.only) remaining.push(target);
  }
  announceEvents(ctx);
  return remaining;
}

async function recordProbeArrival(ctx: Ctx, migrationId: string, target: MailTarget): Promise<boolean> {
  const route = target.via === 'forwarding' ? 'forwarding' : 'direct';
  const result = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const current = await lockMigration(trx, migrationId);
    if (!current || current.workspace_id !== target.workspaceId || current.deleted_at) return 'not_ours' as const;
    if (current.probe_arrived_at || current.state !== 'syncing') return 'taken' as const;
    const next = await saveMigration(tx, current, { probe_arrived_at: iso(ctx.clock.now()), probe_route: route });
    await logActivity(tx, next, SYSTEM, 'test_message_arrived', { route });
    await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, next.id)) });
    return 'taken' as const;
  });
  if (result === 'not_ours') return false;
  ctx.log.info('migration test message arrived', { migration_id: migrationId, route });
  announceEvents(ctx);
  return true;
}

const CODE_PATTERNS = [/(?:confirmation|verification)\s+code\s*(?:is)?\s*[:#]?\s*([A-Za-z0-9-]{4,40})/i, /\bcode\s*[:#]\s*([A-Za-z0-9-]{4,40})/i];
/** Senders whose mail at a forwarding address is only ever a forwarding confirmation (never kept as a conversation). */
const CONFIRMATION_SENDERS = /^forwarding-noreply@google\.com$/i;

/**
 * A provider's mail asking to confirm a forwarding address: its code and link, when it has one of
 * them. `only` says it comes from a sender that sends nothing else (it is then not stored as a
 * conversation); any other mail that looks like one is surfaced and stored as usual, so that a
 * customer's mail is never lost to a guess.
 */
export function forwardingConfirmation(
  mail: Pick<InboundMail, 'subject' | 'text' | 'from'>,
): { code: string | null; link: string | null; only: boolean } | undefined {
  const subject = mail.subject ?? '';
  const text = (mail.text ?? '').slice(0, 20_000);
  const only = CONFIRMATION_SENDERS.test(mail.from.address ?? '');
  const looksLike = only || (/forward/i.test(subject) && /confirm|verif/i.test(subject));
  if (!looksLike) return undefined;
  let code: string | null = null;
  for (const pattern of CODE_PATTERNS) {
    const m = pattern.exec(text);
    if (m) {
      code = m[1];
      break;
    }
  }
  code ??= /\(#\s*([A-Za-z0-9-]{4,40})\)/.exec(subject)?.[1] ?? null;
  const links = [...text.matchAll(/https:\/\/[^\s<>"'()\]]+/g)].map((x) => x[0].replace(/[.,;]+$/, ''));
  const link = links.find((l) => /confirm|verif|vf-|forward/i.test(l)) ?? links[0] ?? null;
  if (!code && !link) return undefined;
  return { code, link, only };
}
