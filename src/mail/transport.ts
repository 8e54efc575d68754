// The nodemailer transport of an e-mail channel's SMTP account: used for replies now and for
// broadcasts later. The password is unsealed here, at send time only, and never kept.
import { createRequire } from 'node:module';
import net from 'node:net';
import type { Transporter } from 'nodemailer';
import type { ChannelRow } from '../channels/service.js';
import type { Ctx } from '../context.js';
import { conflict } from '../platform/errors.js';

export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 60_000 };
/** Messages a pooled connection sends before it is replaced by a fresh one. */
export const POOL_MESSAGES_PER_CONNECTION = 1000;

export function hasSmtpAccount(channel: ChannelRow): boolean {
  return channel.kind === 'email' && !!channel.smtp_host;
}

export interface TransportOptions {
  /** A pool of this many connections (broadcasts); default one connection per message. */
  pool?: number;
  /** Connect to this address (resolved already) instead of the host name; TLS still checks the name. */
  address?: string;
}

/** A transport for the channel (one-use by default, or a pool); close it after sending. */
export function channelTransport(ctx: Pick<Ctx, 'sealer' | 'config'>, channel: ChannelRow, opts: TransportOptions = {}): Transporter {
  if (!hasSmtpAccount(channel))
    throw conflict(`channel ${channel.id} has no SMTP account; set its SMTP server, user name and password first`, 'smtp_not_configured');
  const tls = channel.smtp_tls ?? 'starttls';
  // Required on first use (then cached by Node): a server that sends no mail never loads nodemailer.
  const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof import('nodemailer');
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
