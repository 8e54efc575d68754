// Broadcast test parts: a server with an SMTP sink behind a channel, broadcasts made through the
// API, and SNS notifications posted to the public endpoint.
import assert from 'node:assert/strict';
import type { SnsMessage } from '../../src/broadcasts/sns.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { type AwsFake, startAwsFake } from './aws.js';
import { SINK_LOGIN } from './mail.js';
import { startTestServer, type TestServer } from './server.js';
import { type CaughtMail, type SmtpSink, startSmtpSink } from './smtp-sink.js';

export interface BroadcastBench {
  s: TestServer;
  /** The SMTP server behind channels made by seedEmailChannel (it takes SINK_LOGIN). */
  sink: SmtpSink;
  /** The server's own SMTP account (SVC_SMTP_*): operator mail. */
  operator: SmtpSink;
  /** The SES/SNS fake (SVC_MAILER_ENDPOINT), when asked for. */
  aws: AwsFake | undefined;
  clock: ManualClock;
  close(): Promise<void>;
}

/**
 * A server for broadcast tests: a channel sink, an operator mail sink (SVC_OPERATOR_EMAIL
 * operator@ops.example) and with `aws` the SES/SNS fake (SVC_MAILER_TOPIC_ARNS TOPIC unless `env`
 * says otherwise). Its jobs are stopped: tests drain them and move the clock.
 */
export async function startBroadcastServer(opts: { env?: Record<string, string>; aws?: boolean } = {}): Promise<BroadcastBench> {
  const sink = await startSmtpSink(SINK_LOGIN);
  const operator = await startSmtpSink();
  const aws = opts.aws ? await startAwsFake() : undefined;
  const s = await startTestServer({
    env: {
      SVC_OPERATOR_EMAIL: 'operator@ops.example',
      SVC_SMTP_HOST: '127.0.0.1',
      SVC_SMTP_PORT: String(operator.port),
      SVC_SMTP_TLS: 'none',
      ...(aws ? { SVC_MAILER_TOPIC_ARNS: TOPIC, SVC_MAILER_ENDPOINT: aws.url } : {}),
      ...opts.env,
    },
  });
  await s.app.jobs.stop();
  return {
    s,
    sink,
    operator,
    aws,
    clock: s.clock as ManualClock,
    async close() {
      await s.stop();
      await sink.close();
      await operator.close();
      await aws?.close();
    },
  };
}

/** A header of a caught mail as written (unfolded). */
export function rawHeader(m: CaughtMail, name: string): string | undefined {
  const line = m.parsed.headerLines.find((h) => h.key === name.toLowerCase());
  return line?.line
    .slice(line.line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim();
}

/** The https link of a mail's List-Unsubscribe header. */
export function unsubscribeLink(m: CaughtMail): string {
  return (rawHeader(m, 'list-unsubscribe') ?? '').replace(/^<|>$/g, '');
}

export const TOPIC = 'arn:aws:sns:us-east-1:123456789012:svc-feedback';

export function addresses(n: number, prefix = 'r'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}@rcpt.example.org`);
}

/** A draft through the API (recipients added in requests of at most 10,000). */
export async function createBroadcast(s: TestServer, token: string, inboxId: string, emails: string[], extra: Record<string, unknown> = {}) {
  const r = await s.request('POST', '/v1/broadcasts', {
    token,
    body: {
      inbox_id: inboxId,
      subject: 'Our news',
      text: 'Hello! Unsubscribe: {{unsubscribe_url}}',
      html: '<p>Hello!</p>',
      ...extra,
      recipients: { emails: emails.slice(0, 10_000) },
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  for (let i = 10_000; i < emails.length; i += 10_000) {
    const more = await s.request('POST', `/v1/broadcasts/${r.body.id}/recipients`, { token, body: { emails: emails.slice(i, i + 10_000) } });
    assert.equal(more.status, 200, JSON.stringify(more.body));
  }
  return r.body as { id: string; counts: Record<string, number>; status: string };
}

export async function schedule(s: TestServer, token: string, id: string, body?: Record<string, unknown>) {
  return s.request('POST', `/v1/broadcasts/${id}/schedule`, { token, body: body ?? {} });
}

export async function getBroadcast(s: TestServer, token: string, id: string) {
  const r = await s.request('GET', `/v1/broadcasts/${id}`, { token });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as {
    id: string;
    status: string;
    pause_reason: string | null;
    pause_detail: string | null;
    continues_at: string | null;
    counts: Record<string, number>;
  };
}

export async function postSns(s: TestServer, m: SnsMessage | string, contentType = 'text/plain; charset=UTF-8') {
  return s.request('POST', '/v1/mailer/notifications', {
    raw: typeof m === 'string' ? m : JSON.stringify(m),
    headers: { 'content-type': contentType, 'x-amz-sns-message-type': typeof m === 'string' ? 'Notification' : m.Type },
  });
}
