// Opening the old mailbox of a migration: where it is (preset or the user's server), the address
// check (no private or loopback addresses unless SVC_MIGRATION_ALLOW_PRIVATE), the sealed password,
// and recording commands the read-only check refused.
import net from 'node:net';
import tls from 'node:tls';
import type { Ctx } from '../../context.js';
import type { ImapTlsMode } from '../../db/schema.js';
import { conflict } from '../../platform/errors.js';
import { nonPublicRange } from '../../webhooks/address.js';
import { logActivity, type MigrationRow, SYSTEM } from '../store.js';
import { classifyImapError, connectReadOnly, describeImapError, type ReadOnlyMailbox, ReadOnlyViolation } from './imap.js';
import { findPreset } from './presets.js';
import { accessTokenFor, isSignInProvider } from './sign-in.js';
import { SourceError, type TestStep } from './source-error.js';

export interface ImapServer {
  host: string;
  port: number;
  tls: ImapTlsMode;
}

/**
 * The server a migration reads: imapServerOf, except that SVC_OAUTH_IMAP (development and tests)
 * stands in for the sign-in providers' servers.
 */
export function sourceServerOf(ctx: Pick<Ctx, 'config'>, m: Pick<MigrationRow, 'provider' | 'imap_host' | 'imap_port' | 'imap_tls'>): ImapServer | undefined {
  const override = ctx.config.oauth.imap;
  if (override && isSignInProvider(m.provider)) return { host: override.host, port: override.port, tls: 'none' };
  return imapServerOf(m);
}

export function imapServerOf(m: Pick<MigrationRow, 'provider' | 'imap_host' | 'imap_port' | 'imap_tls'>): ImapServer | undefined {
  const preset = findPreset(m.provider);
  if (preset?.imap) return preset.imap;
  if (!m.imap_host) return undefined;
  const mode = m.imap_tls ?? 'tls';
  return { host: m.imap_host, port: m.imap_port ?? (mode === 'tls' ? 993 : 143), tls: mode };
}

export { SourceError, type TestStep };

/** Resolves the server's name and checks every address; returns the one to connect to. */
export async function resolveServer(ctx: Pick<Ctx, 'lookup' | 'config'>, server: ImapServer): Promise<string> {
  const bare = server.host.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(bare)) addresses = [bare];
  else {
    try {
      addresses = (await ctx.lookup(bare)).map((a) => a.address);
    } catch (error) {
      throw new SourceError('dns', `the name ${server.host} cannot be resolved (${(error as { code?: string }).code ?? 'lookup failed'})`);
    }
    if (addresses.length === 0) throw new SourceError('dns', `the name ${server.host} has no address`);
  }
  if (!ctx.config.migration.allowPrivate) {
    for (const address of addresses) {
      const range = nonPublicRange(address);
      if (range)
        throw new SourceError(
          'dns',
          `${server.host === address ? address : `${server.host} resolves to ${address}`}, which is a ${range} address; mailboxes are read from public internet addresses only (SVC_MIGRATION_ALLOW_PRIVATE lifts this)`,
          'address',
        );
    }
  }
  return addresses[0];
}

function password(ctx: Pick<Ctx, 'sealer'>, m: MigrationRow): string {
  if (!m.password_sealed) throw conflict('the migration has no password; connect with PUT /v1/migrations/{id}/credentials first', 'migration_state');
  return ctx.sealer.open(m.password_sealed);
}

/** Writes a refused command to the activity log and the migration's counter. */
export async function recordBlocked(ctx: Ctx, m: MigrationRow, violation: ReadOnlyViolation): Promise<void> {
  ctx.log.warn('imap command blocked', { migration_id: m.id, command: violation.command, reason: violation.reason });
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('mailbox_migrations')
      .set((eb) => ({ blocked_commands: eb('blocked_commands', '+', 1) }))
      .where('id', '=', m.id)
      .execute();
    await logActivity({ db: trx, clock: ctx.clock }, m, SYSTEM, 'command_blocked', { command: violation.command, reason: violation.reason });
  });
}

/** Opens the mailbox read-only (every command checked). Failures are SourceErrors naming the step. */
export async function openSource(ctx: Ctx, m: MigrationRow, opts: { connectTimeoutMs?: number } = {}): Promise<ReadOnlyMailbox> {
  const server = sourceServerOf(ctx, m);
  if (!server) throw conflict('the migration has no IMAP server; set imap.host first', 'migration_state');
  const address = await resolveServer(ctx, server);
  const signIn = isSignInProvider(m.provider);
  // A sign-in provider's grant gives an access token (refreshed when it is about to expire).
  const secret = signIn ? { accessToken: await accessTokenFor(ctx, m) } : { password: password(ctx, m) };
  try {
    return await connectReadOnly({
      address,
      port: server.port,
      tls: server.tls,
      servername: net.isIP(server.host) ? undefined : server.host,
      user: m.username ?? m.source_address ?? '',
      ...secret,
      connectTimeoutMs: opts.connectTimeoutMs,
    });
  } catch (error) {
    if (error instanceof ReadOnlyViolation) {
      await recordBlocked(ctx, m, error);
      throw new SourceError('login', error.message, 'read_only');
    }
    const kind = classifyImapError(error);
    if (signIn && kind === 'login')
      throw new SourceError(
        'login',
        `the IMAP server refused the sign-in of ${m.username ?? m.source_address ?? 'this mailbox'} (${describeImapError(error)}); check that IMAP is on for the mailbox, and sign in again`,
        'sign_in',
      );
    const step: TestStep = kind === 'login' ? 'login' : kind === 'tls' ? 'tls' : kind === 'connect' ? 'connect' : 'login';
    throw new SourceError(step, describeImapError(error), kind);
  }
}

/** TCP connect (and TLS handshake for implicit TLS): the connection test's first steps. */
export async function probeTransport(server: ImapServer, address: string, timeoutMs: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host: address, port: server.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new SourceError('connect', `no answer from ${server.host}:${server.port} within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new SourceError('connect', `cannot connect to ${server.host}:${server.port} (${error.code ?? error.message})`));
    });
  });
  if (server.tls !== 'tls') return;
  await new Promise<void>((resolve, reject) => {
    const socket = tls.connect({ host: address, port: server.port, servername: net.isIP(server.host) ? undefined : server.host, minVersion: 'TLSv1.2' });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new SourceError('tls', `no TLS handshake with ${server.host}:${server.port} within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new SourceError('tls', `TLS with ${server.host} failed (${error.code ?? error.message})`, 'tls'));
    });
  });
}

export { describeImapError };
