// Reaching the channel's mailbox: the migration's address check, transport probe and read-only
// client (src/mailbox-migration/sources), with IDLE allowed. Failures name the step that failed
// and carry the server's words, never the password.
import net from 'node:net';
import type { Ctx } from '../context.js';
import { probeTransport, resolveServer, SourceError, type TestStep } from '../mailbox-migration/sources/connect.js';
import { classifyImapError, connectReadOnly, describeImapError, type ReadOnlyMailbox, ReadOnlyViolation } from '../mailbox-migration/sources/imap.js';

export interface ReaderServer {
  host: string;
  port: number;
  tls: 'tls' | 'starttls' | 'none';
  username: string;
}

/** Connects and logs in (read-only; IDLE allowed). */
export async function openMailbox(
  ctx: Pick<Ctx, 'lookup' | 'config'>,
  server: ReaderServer,
  password: string,
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
      password,
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
