// Reaching the channel's mailbox: the migration's address check, transport probe and read-only
// client (src/mailbox-migration/sources), with IDLE allowed. Failures name the step that failed
// and carry the server's words, never the password.
import net from 'node:net';
import type { Ctx } from '../context.js';
import { announceEvents } from '../events/service.js';
import { channelAccessToken, findGrant, GrantUnavailableError, providerName, SignInRequiredError } from '../mail-accounts/grants.js';
import { tellChannelSignInRequired } from '../mail-accounts/revoked.js';
import { probeTransport, resolveServer, SourceError, sourceServerOf, type TestStep } from '../mailbox-migration/sources/connect.js';
import { classifyImapError, connectReadOnly, describeImapError, type ReadOnlyMailbox, ReadOnlyViolation } from '../mailbox-migration/sources/imap.js';
import type { ReaderRow } from './store.js';

export interface ReaderServer {
  host: string;
  port: number;
  tls: 'tls' | 'starttls' | 'none';
  username: string;
}

/** How a session logs in: the account's password, or the channel's Google/Microsoft sign-in (XOAUTH2). */
export type ReaderLogin = { server: ReaderServer } & ({ password: string } | { accessToken: string });

/**
 * The server and login of a reader: an IMAP account's sealed password, or a fresh access token of
 * the channel's sign-in for imap.gmail.com / outlook.office365.com (SVC_OAUTH_IMAP stands in for
 * them in development and tests). A sign-in that is missing, revoked or of the other provider fails
 * the login step with words that say to sign in again.
 */
export async function readerLogin(ctx: Ctx, row: ReaderRow, opts: { renew?: boolean } = {}): Promise<ReaderLogin> {
  if (row.kind === 'imap') {
    if (!row.password_sealed || !row.host || !row.port) throw new SourceError('login', 'no password is stored for this mailbox');
    return { server: { host: row.host, port: row.port, tls: row.tls ?? 'tls', username: row.username ?? '' }, password: ctx.sealer.open(row.password_sealed) };
  }
  const provider = row.kind;
  if (!(await findGrant(ctx.db, row.channel_id)))
    throw new SourceError('login', `the channel is not signed in yet: sign in with ${providerName(provider)} in the channel's settings`);
  let token: Awaited<ReturnType<typeof channelAccessToken>>;
  try {
    token = await channelAccessToken(ctx, row.channel_id, { provider, renew: opts.renew });
  } catch (error) {
    // A refused grant (channelAccessToken marked it revoked) stops the mail from arriving even when
    // no reply failed: the managers are told once per revocation.
    if (error instanceof SignInRequiredError && (await tellChannelSignInRequired(ctx, row.channel_id, 'reading'))) announceEvents(ctx);
    if (error instanceof SignInRequiredError || error instanceof GrantUnavailableError) throw new SourceError('login', error.message);
    throw error;
  }
  if (token.provider !== provider)
    throw new SourceError(
      'login',
      `the channel is signed in with ${providerName(token.provider)}; sign in with ${providerName(provider)} to read this mailbox`,
    );
  const server = sourceServerOf(ctx, { provider, imap_host: null, imap_port: null, imap_tls: null })!;
  return { server: { ...server, username: token.username }, accessToken: token.accessToken };
}

/** Connects and logs in (read-only; IDLE allowed). */
export async function openMailbox(
  ctx: Pick<Ctx, 'lookup' | 'config'>,
  server: ReaderServer,
  secret: string | { accessToken: string },
  opts: { connectTimeoutMs?: number } = {},
): Promise<ReadOnlyMailbox> {
  const address = await resolveServer(ctx, server);
  try {
    return await connectReadOnly({
      address,
      port: server.port,
      tls: server.tls,
      servername: net.isIP(server.host) ? undefined : server.host,
      user: server.username,
      ...(typeof secret === 'string' ? { password: secret } : { accessToken: secret.accessToken }),
      allowIdle: true,
      connectTimeoutMs: opts.connectTimeoutMs ?? 15_000,
    });
  } catch (error) {
    if (error instanceof ReadOnlyViolation) throw new SourceError('login', error.message, 'read_only');
    const kind = classifyImapError(error);
    const step: TestStep = kind === 'tls' ? 'tls' : kind === 'connect' ? 'connect' : 'login';
    throw new SourceError(step, describeImapError(error), kind);
  }
}

/** A failure as the reader shows it: the step and the server's words. */
export function failureOf(error: unknown): { step: TestStep | 'read'; message: string } {
  if (error instanceof SourceError) return { step: error.step, message: error.message };
  return { step: 'read', message: describeImapError(error) };
}

/**
 * The migration's connection test (DNS, connect, TLS, login, list) before settings are saved: the
 * failure with its step, or undefined when the mailbox was reached and its folders listed.
 */
export async function testMailbox(ctx: Pick<Ctx, 'lookup' | 'config'>, server: ReaderServer, password: string): Promise<SourceError | undefined> {
  try {
    const address = await resolveServer(ctx, server);
    await probeTransport(server, address, 10_000);
    const mailbox = await openMailbox(ctx, server, password);
    try {
      await mailbox.folders();
    } catch (error) {
      throw new SourceError('list', describeImapError(error));
    } finally {
      await mailbox.logout();
    }
    return undefined;
  } catch (error) {
    return error instanceof SourceError ? error : new SourceError('connect', describeImapError(error));
  }
}
