// A channel's "read this mailbox" settings: checked (the migration's connection test, before
// anything is saved), stored with the password sealed, and shown without it with the reader's state.
import type { ChannelRow } from '../channels/store.js';
import type { Ctx } from '../context.js';
import { inTransaction } from '../db/transaction.js';
import { requireProviderClient } from '../mail-accounts/sign-in.js';
import { iso } from '../platform/clock.js';
import { AppError, invalid } from '../platform/errors.js';
import { CONNECTION_TEST_WINDOW, RateLimiter } from '../platform/rate-limit.js';
import { READER_CHANGED } from './background.js';
import { testMailbox } from './connection.js';
import { deleteFolders, deleteReader, findReader, type ReaderRow, readersOf, saveReader } from './store.js';

export type ReadingInput =
  | { kind: 'imap'; host: string; port?: number; tls?: 'tls' | 'starttls' | 'none'; username: string; password?: string }
  | { kind: 'google' | 'microsoft' }
  | null;

export interface PreparedReading {
  clear: boolean;
  row?: Pick<ReaderRow, 'kind' | 'host' | 'port' | 'tls' | 'username' | 'password_sealed'>;
}

const DEFAULT_PORT = { tls: 993, starttls: 143, none: 143 } as const;

function checkHost(host: string): string {
  const h = host.trim().toLowerCase();
  if (!/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(h) && !/^\[?[0-9a-f:.]+\]?$/.test(h))
    throw invalid(`reading.host is not a host name: ${JSON.stringify(host)}`);
  return h;
}

/**
 * Checks the settings and, for IMAP, connects (DNS, connect, TLS, login, list) before anything is
 * saved: a failure is 422 mailbox_unreachable with the step and the server's words.
 */
export async function prepareReading(
  ctx: Ctx,
  workspaceId: string,
  channel: Pick<ChannelRow, 'id' | 'kind'> | undefined,
  input: ReadingInput,
): Promise<PreparedReading> {
  if (channel && channel.kind !== 'email') throw invalid('reading is a field of e-mail channels');
  if (input === null) return { clear: true };
  if (input.kind !== 'imap') {
    // The channel's sign-in (started by the answer when there is none yet) is what the reader logs in with.
    requireProviderClient(ctx, input.kind);
    return { clear: false, row: { kind: input.kind, host: null, port: null, tls: null, username: null, password_sealed: null } };
  }
  const host = checkHost(input.host);
  const tls = input.tls ?? 'tls';
  const port = input.port ?? DEFAULT_PORT[tls];
  const username = input.username.trim();
  if (!username) throw invalid('reading.username must not be empty');
  let password = input.password;
  if (password === '') throw invalid('reading.password must not be empty');
  if (password === undefined) {
    // The stored password stays when the same account on the same server is saved again.
    const current = channel ? await findReader(ctx.db, channel.id) : undefined;
    if (!current?.password_sealed || current.host !== host || current.username !== username)
      throw invalid('reading.password is required for a new mailbox account');
    password = ctx.sealer.open(current.password_sealed);
  }
  // Each save connects and logs in: at most 5 per channel (per workspace while creating) in 10 minutes.
  await new RateLimiter(ctx, 'mailbox-reader-test', CONNECTION_TEST_WINDOW.limit, CONNECTION_TEST_WINDOW.windowMs).hit(
    channel?.id ?? `new:${workspaceId}`,
    `at most ${CONNECTION_TEST_WINDOW.limit} connection tests per 10 minutes; try again later`,
  );
  const failure = await testMailbox(ctx, { host, port, tls, username }, password);
  if (failure)
    throw new AppError(422, 'mailbox_unreachable', `cannot read the mailbox: ${failure.step} failed: ${failure.message}`, { failed_step: failure.step });
  return { clear: false, row: { kind: 'imap', host, port, tls, username, password_sealed: ctx.sealer.seal(password) } };
}

/**
 * A channel has one sign-in: reading with Google while sending with Microsoft (or the reverse) is
 * refused. `smtpAuth` and `reading` are what the save leaves (the body's, else the stored ones).
 */
export function checkOneSignIn(smtpAuth: string, readingKind: string | undefined): void {
  if (!readingKind || readingKind === 'imap' || smtpAuth === 'password' || smtpAuth === readingKind) return;
  throw invalid(`a channel signs in with one provider: it sends with ${smtpAuth} and cannot read with ${readingKind}`, { field: 'reading.kind' });
}

/** The reading kind a save leaves: the body's (null: none), else the stored one. */
export async function readingKindAfter(ctx: Pick<Ctx, 'db'>, channelId: string | undefined, reading: ReadingInput | undefined): Promise<string | undefined> {
  if (reading !== undefined) return reading?.kind;
  return channelId ? (await findReader(ctx.db, channelId))?.kind : undefined;
}

/** Saves prepared settings (a new reader starts at `connecting`); null settings stop reading. */
export async function saveReading(ctx: Ctx, channel: ChannelRow, prepared: PreparedReading): Promise<void> {
  await inTransaction(ctx.db, async (trx) => {
    const current = await findReader(trx, channel.id);
    if (prepared.clear) {
      if (current) await deleteReader(trx, channel.id);
      return;
    }
    const now = iso(ctx.clock.now());
    const next = prepared.row!;
    // Another account or server: its folders start afresh (mail from now on).
    if (current && (current.kind !== next.kind || current.host !== next.host || current.username !== next.username || current.port !== next.port))
      await deleteFolders(trx, channel.id);
    await saveReader(trx, {
      channel_id: channel.id,
      workspace_id: channel.workspace_id,
      ...next,
      state: 'connecting',
      mode: null,
      error_step: null,
      error_message: null,
      failures: 0,
      retry_at: null,
      last_read_at: current?.last_read_at ?? null,
      connected_at: null,
      lease_owner: null,
      lease_until: null,
      created_at: current?.created_at ?? now,
      updated_at: now,
    });
  });
  ctx.hub.emit(READER_CHANGED, { channelId: channel.id });
}

export function formatReading(row: ReaderRow | undefined) {
  if (!row) return { reading: null, reader: null };
  return {
    reading: { kind: row.kind, host: row.host, port: row.port, tls: row.tls, username: row.username, password_set: row.password_sealed !== null },
    reader: {
      state: row.state,
      mode: row.mode,
      last_read_at: row.last_read_at,
      connected_at: row.connected_at,
      retry_at: row.retry_at,
      error: row.error_step ? { step: row.error_step, message: row.error_message ?? '' } : null,
    },
  };
}

/** The reading settings and reader state of e-mail channels, by channel id. */
export async function readingsOf(ctx: Pick<Ctx, 'db'>, channels: readonly Pick<ChannelRow, 'id' | 'kind'>[]) {
  const rows = await readersOf(
    ctx.db,
    channels.filter((c) => c.kind === 'email').map((c) => c.id),
  );
  return new Map(channels.filter((c) => c.kind === 'email').map((c) => [c.id, formatReading(rows.get(c.id))]));
}
