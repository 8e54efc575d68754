// Mail from the server's own SMTP account (SVC_SMTP_*): sign-in codes, the operator digest, probes.
import { createRequire } from 'node:module';
import type { Transporter } from 'nodemailer';
import type { Config } from '../config.js';
import type { Logger } from './log.js';

export interface SystemMessage {
  to: string;
  subject: string;
  text: string;
  headers?: Record<string, string>;
  /** Message-ID with angle brackets; nodemailer makes one when absent. */
  messageId?: string;
}

export interface SystemMailer {
  /** Sends one message; false (after logging `mail not sent`) when the account is missing or fails. */
  send(message: SystemMessage, purpose: string): Promise<boolean>;
  close(): void;
}

export function createSystemMailer(config: Config, log: Logger): SystemMailer {
  const smtp = config.smtp;
  let transport: Transporter | undefined;
  if (smtp) {
    // Required here, not at the top: a server without an SMTP account never loads nodemailer.
    const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof import('nodemailer');
    transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.tls === 'tls',
      ignoreTLS: smtp.tls === 'none',
      requireTLS: smtp.tls === 'starttls',
      auth: smtp.username ? { user: smtp.username, pass: smtp.password ?? '' } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }
  return {
    async send(message, purpose) {
      if (!transport || !smtp) {
        log.warn('mail not sent', { purpose, reason: 'SVC_SMTP_HOST is not set' });
        return false;
      }
      try {
        await transport.sendMail({
          from: smtp.fromName ? { name: smtp.fromName, address: smtp.from } : smtp.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          headers: message.headers,
          messageId: message.messageId,
        });
        return true;
      } catch (error) {
        log.error('mail not sent', { purpose, smtp_host: smtp.host, error });
        return false;
      }
    },
    close() {
      transport?.close();
    },
  };
}
