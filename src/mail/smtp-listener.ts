// The SMTP ingress (smtp-server), on SVC_SMTP_ADDR while SVC_INGRESS_SECRET is set. It accepts
// mail for channel and forwarding addresses, answers 550 at RCPT for anything else (addresses of
// deleted workspaces included), refuses messages over SVC_INGRESS_MAX_BYTES at MAIL FROM (SIZE=)
// or after DATA (552), and answers 250 only once the message is committed. Relays may
// authenticate with the ingress secret; STARTTLS is not offered (terminate TLS at the MX in front).

import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { Ctx } from '../context.js';
import { safeEqual } from '../platform/crypto.js';
import { AppError } from '../platform/errors.js';
import { type MailHandlers, recipientHandlerOf } from './handlers.js';
import { ingestEmail } from './ingest.js';
import { ParsePool } from './parse-pool.js';
import { type MailTarget, resolveRecipient } from './recipients.js';

export const MAX_RECIPIENTS = 100;

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

async function resolveRecipientOrHandler(ctx: Ctx, handlers: MailHandlers, address: string): Promise<MailTarget | 'handler' | undefined> {
  if (await recipientHandlerOf(ctx, handlers, address)) return 'handler';
  return resolveRecipient(ctx, address);
}

export async function startSmtpListener(ctx: Ctx, handlers: MailHandlers): Promise<{ port: number; host: string; stop(): Promise<void> } | undefined> {
  const ingress = ctx.config.ingress;
  const addr = ctx.config.smtpAddr;
  if (!ingress || !addr) return undefined;
  const maxBytes = ctx.config.ingressMaxBytes;
  // Targets per SMTP transaction (the envelope object is new for every MAIL FROM).
  const targets = new WeakMap<object, MailTarget[]>();
  // Addresses that recipient handlers own (broadcast return paths) per SMTP transaction.
  const handlerAddresses = new WeakMap<object, string[]>();
  const parser = new ParsePool(ctx.log);
  /** An SMTP refusal, counted in svc_smtp_refusals_total by reason. */
  const refuse = (reason: string, code: number, message: string) => {
    ctx.metrics.smtpRefusals.inc({ reason });
    return smtpError(code, message);
  };

  // Required only when the ingress is on.
  const { SMTPServer } = createRequire(import.meta.url)('smtp-server') as typeof import('smtp-server');
  const server = new SMTPServer({
    name: new URL(ctx.config.publicUrl).hostname,
    banner: 'svc ingress',
    size: maxBytes,
    authOptional: true,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    maxClients: 200,
    socketTimeout: 60_000,
    closeTimeout: ctx.config.shutdownTimeoutMs,
    onConnect(_session, callback) {
      ctx.metrics.smtpSessions.inc();
      callback();
    },
    onAuth(auth, _session, callback) {
      if (typeof auth.password === 'string' && safeEqual(auth.password, ingress.secret)) return callback(null, { user: 'relay' });
      callback(refuse('auth_failed', 535, '5.7.8 authentication failed'));
    },
    onRcptTo(address, session, callback) {
      const list = targets.get(session.envelope) ?? [];
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return callback(refuse('too_many_recipients', 452, '4.5.3 too many recipients'));
      resolveRecipientOrHandler(ctx, handlers, address.address).then(
        (target) => {
          if (target === 'handler') {
            handlerAddresses.set(session.envelope, [...(handlerAddresses.get(session.envelope) ?? []), address.address]);
            return callback();
          }
          if (!target) return callback(refuse('unknown_recipient', 550, '5.1.1 no such recipient here'));
          if (!list.some((t) => t.inboxId === target.inboxId)) list.push(target);
          targets.set(session.envelope, list);
          callback();
        },
        (error) => {
          ctx.log.error('smtp recipient check failed', { error });
          callback(refuse('temporary_failure', 451, '4.3.0 temporary failure, try again later'));
        },
      );
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= maxBytes) chunks.push(chunk);
      });
      stream.on('error', (error) => callback(error));
      stream.on('end', () => {
        if (stream.sizeExceeded || size > maxBytes) return callback(refuse('too_large', 552, `5.3.4 message is larger than ${maxBytes} bytes`));
        if (size === 0) return callback(refuse('empty', 554, '5.6.0 the message is empty'));
        const list = targets.get(session.envelope) ?? [];
        const mailFrom = session.envelope.mailFrom;
        ingestEmail(ctx, {
          raw: Buffer.concat(chunks, size),
          recipients: handlerAddresses.get(session.envelope) ?? [],
          handlers,
          targets: list,
          envelopeFrom: mailFrom ? mailFrom.address || null : null,
          via: 'smtp',
          parse: (raw) => parser.parse(raw),
        }).then(
          (results) => callback(null, results.length ? `2.0.0 stored as ${results.map((r) => r.message_id).join(' ')}` : '2.0.0 report received'),
          (error) => {
            if (error instanceof AppError && error.status === 404) return callback(refuse('unknown_recipient', 550, '5.1.1 no such recipient here'));
            if (error instanceof AppError && error.status < 500) return callback(refuse('rejected', 554, `5.6.0 ${error.message}`));
            ctx.log.error('inbound mail not stored', { via: 'smtp', error });
            callback(refuse('temporary_failure', 451, '4.3.0 temporary failure, try again later'));
          },
        );
      });
    },
  });
  server.on('error', (error) => ctx.log.warn('smtp ingress connection error', { error }));

  try {
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(addr.port, addr.host, () => resolve());
    });
  } catch (error) {
    await parser.close();
    throw error;
  }
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    host: addr.host,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await parser.close();
    },
  };
}
