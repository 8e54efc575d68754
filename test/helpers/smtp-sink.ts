// An SMTP server on 127.0.0.1 that catches outbound mail for tests (smtp-server + mailparser).
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  from: string;
  to: string[];
  raw: Buffer;
  parsed: ParsedMail;
}

export interface SmtpSink {
  port: number;
  messages: CaughtMail[];
  /** Resolves when at least `count` messages have arrived (rejects after timeoutMs). */
  waitFor(count: number, timeoutMs?: number): Promise<CaughtMail[]>;
  /** Makes the next deliveries fail with this SMTP reply code (e.g. 451 or 550); null stops failing. */
  failWith(code: number | null): void;
  /** Refuses this recipient at RCPT TO with the code and text (e.g. 550, '5.1.1 no such user'); null accepts it again. */
  rejectRecipient(address: string, answer: { code: number; text: string } | null): void;
  /** Sign-ins the sink accepted or refused (XOAUTH2: the user and the bearer token). */
  auths: { method: string; user: string; token?: string; ok: boolean }[];
  close(): Promise<void>;
}

export async function startSmtpSink(
  opts: {
    username?: string;
    password?: string;
    /** The text after 250 (Amazon SES answers `Ok <message id>`). */
    answer?: () => string;
    /** Takes AUTH XOAUTH2 (as smtp.gmail.com and smtp.office365.com do): whether this user's bearer token is live. */
    xoauth2?: (user: string, token: string) => boolean;
  } = {},
): Promise<SmtpSink> {
  const auths: SmtpSink['auths'] = [];
  const messages: CaughtMail[] = [];
  const waiters: Array<() => void> = [];
  let failCode: number | null = null;
  const rejected = new Map<string, { code: number; text: string }>();
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: !opts.username && !opts.xoauth2,
    ...(opts.xoauth2 ? { authMethods: ['XOAUTH2'] } : {}),
    logger: false,
    onAuth(auth, _session, cb) {
      if (opts.xoauth2) {
        const ok = auth.method === 'XOAUTH2' && !!auth.accessToken && opts.xoauth2(auth.username ?? '', auth.accessToken);
        auths.push({ method: auth.method, user: auth.username ?? '', token: auth.accessToken, ok });
        // Google's answer to a token it does not take: a 334 with the JSON challenge, then 535.
        return ok ? cb(null, { user: auth.username }) : cb(null, { data: { status: '401', schemes: 'bearer', scope: 'https://mail.google.com/' } });
      }
      auths.push({ method: auth.method, user: auth.username ?? '', ok: auth.username === opts.username && auth.password === opts.password });
      if (auth.username === opts.username && auth.password === opts.password) return cb(null, { user: auth.username });
      cb(Object.assign(new Error('invalid credentials'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, cb) {
      const answer = rejected.get(address.address.toLowerCase());
      if (answer) return cb(Object.assign(new Error(answer.text), { responseCode: answer.code }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        if (failCode !== null) return cb(Object.assign(new Error('sink refuses'), { responseCode: failCode }));
        const raw = Buffer.concat(chunks);
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          parsed: await simpleParser(raw),
        });
        for (const w of waiters.splice(0)) w();
        if (opts.answer) cb(null, opts.answer());
        else cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    messages,
    auths,
    failWith(code) {
      failCode = code;
    },
    rejectRecipient(address, answer) {
      if (answer) rejected.set(address.toLowerCase(), answer);
      else rejected.delete(address.toLowerCase());
    },
    waitFor(count, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`expected ${count} mails, got ${messages.length}`)), timeoutMs);
        const check = () => {
          if (messages.length >= count) {
            clearTimeout(deadline);
            resolve(messages.slice());
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
