// The nodemailer transport of an e-mail channel's SMTP account: used for replies now and for
// broadcasts later. The password is unsealed here, at send time only, and never kept; a channel
// that sends with a sign-in gets its access token from src/mail-accounts the same way.
import { createRequire } from 'node:module';
import net from 'node:net';
import type { Transporter } from 'nodemailer';
import type { ChannelRow } from '../channels/service.js';
import type { Ctx } from '../context.js';
import { channelAccessToken } from '../mail-accounts/grants.js';
import { conflict } from '../platform/errors.js';

type TransportCtx = Pick<Ctx, 'sealer' | 'config' | 'db' | 'clock' | 'log'>;

export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 60_000 };
/** Messages a pooled connection sends before it is replaced by a fresh one. */
export const POOL_MESSAGES_PER_CONNECTION = 1000;

export function hasSmtpAccount(channel: ChannelRow): boolean {
  return channel.kind === 'email' && !!channel.smtp_host;
}

/** The SMTP servers of the sign-in providers (AUTH XOAUTH2 after STARTTLS). */
export const SIGN_IN_SMTP = { google: 'smtp.gmail.com', microsoft: 'smtp.office365.com' } as const;

export interface TransportOptions {
  /** A pool of this many connections (broadcasts); default one connection per message. */
  pool?: number;
  /** Connect to this address (resolved already) instead of the host name; TLS still checks the name. */
  address?: string;
}

/** A transport for the channel (one-use by default, or a pool); close it after sending. */
export function channelTransport(ctx: TransportCtx, channel: ChannelRow, opts: TransportOptions = {}): Transporter {
  if (!hasSmtpAccount(channel))
    throw conflict(`channel ${channel.id} has no SMTP account; set its SMTP server, user name and password first`, 'smtp_not_configured');
  const tls = channel.smtp_tls ?? 'starttls';
  // Required on first use (then cached by Node): a server that sends no mail never loads nodemailer.
  const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof import('nodemailer');
  if (channel.smtp_auth !== 'password') return signInTransport(ctx, channel, opts, nodemailer);
  return nodemailer.createTransport({
    ...(opts.pool ? { pool: true as const, maxConnections: opts.pool, maxMessages: POOL_MESSAGES_PER_CONNECTION } : {}),
    host: opts.address ?? smtpHost(ctx.config, channel.smtp_host!),
    ...(opts.address && !net.isIP(channel.smtp_host!) ? { tls: { servername: smtpHost(ctx.config, channel.smtp_host!) } } : {}),
    port: channel.smtp_port ?? (tls === 'tls' ? 465 : 587),
    secure: tls === 'tls',
    ignoreTLS: tls === 'none',
    requireTLS: tls === 'starttls',
    auth: channel.smtp_username
      ? { user: channel.smtp_username, pass: channel.smtp_password_sealed ? ctx.sealer.open(channel.smtp_password_sealed) : '' }
      : undefined,
    ...SMTP_TIMEOUTS,
  });
}

/**
 * A channel that sends with its Google or Microsoft sign-in: AUTH XOAUTH2 with the grant's access
 * token (src/mail-accounts), fetched when a connection signs in and renewed when the server refuses
 * it. SVC_OAUTH_SMTP (development and tests) replaces the provider's server (plain, no TLS).
 */
function signInTransport(ctx: TransportCtx, channel: ChannelRow, opts: TransportOptions, nodemailer: typeof import('nodemailer')): Transporter {
  const override = ctx.config.oauth.smtp;
  const host = override?.host ?? SIGN_IN_SMTP[channel.smtp_auth as keyof typeof SIGN_IN_SMTP];
  return nodemailer.createTransport({
    ...(opts.pool ? { pool: true as const, maxConnections: opts.pool, maxMessages: POOL_MESSAGES_PER_CONNECTION } : {}),
    host: opts.address ?? host,
    ...(opts.address && !override ? { tls: { servername: host } } : {}),
    port: override?.port ?? 587,
    secure: false,
    ignoreTLS: !!override,
    requireTLS: !override,
    auth: {
      type: 'OAuth2',
      user: channel.smtp_username ?? channel.from_address ?? channel.address ?? '',
      provisionCallback: (_user, renew, done) => {
        channelAccessToken(ctx, channel.id, { renew, provider: channel.smtp_auth as 'google' | 'microsoft' }).then(
          (t) => done(null, t.accessToken, t.expiresAt ? Date.parse(t.expiresAt) : undefined),
          (error: Error) => done(error),
        );
      },
    },
    ...SMTP_TIMEOUTS,
  });
}

/**
 * Where to connect for the channel's SMTP host. With SVC_MAILER_ENDPOINT (tests), Amazon SES's SMTP
 * endpoints are reached on that endpoint's host (at the channel's port), like the other AWS calls.
 */
export function smtpHost(config: Pick<Ctx['config'], 'mailerEndpoint'>, host: string): string {
  if (config.mailerEndpoint && /^email-smtp(-fips)?\.[a-z0-9-]+\.amazonaws\.com$/i.test(host)) return new URL(config.mailerEndpoint).hostname;
  return host;
}

/** The From of mail through the channel: its from address (else its address) and display name. */
export function channelSender(channel: ChannelRow, fallbackName: string): { name: string; address: string } {
  return { name: channel.display_name ?? fallbackName, address: channel.from_address ?? channel.address! };
}

/** The domain our Message-IDs use for mail through the channel. */
export function channelMailDomain(channel: ChannelRow): string {
  const address = channel.from_address ?? channel.address ?? '';
  return address.slice(address.lastIndexOf('@') + 1) || 'svc.invalid';
}
