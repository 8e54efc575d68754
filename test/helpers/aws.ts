// A fake of the Amazon services svc talks to, on 127.0.0.1 (reached through SVC_MAILER_ENDPOINT):
// SNS as a sender of signed HTTP notifications (a generated key pair, its self-signed certificate
// served from this server, SignatureVersion 1 or 2, subscription confirmation URLs). Routes of
// other services are added with `route`.
import { execFileSync } from 'node:child_process';
import { createSign, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type SnsMessage, stringToSign } from '../../src/broadcasts/sns.js';
import { tempDir } from './server.js';

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}
export type FakeAnswer = { status: number; body?: string; headers?: Record<string, string> };
export type FakeRoute = (req: FakeRequest) => FakeAnswer | undefined | Promise<FakeAnswer | undefined>;

export interface AwsFake {
  url: string;
  requests: FakeRequest[];
  /** Routes are tried newest first; the first that answers wins. */
  route(handler: FakeRoute): void;
  sns: SnsSigner;
  close(): Promise<void>;
}

export interface SnsSigner {
  certUrl: string;
  /** Subscription confirmations visited (by token). */
  confirmed: string[];
  notification(topicArn: string, message: unknown, opts?: { version?: '1' | '2'; subject?: string; certUrl?: string }): SnsMessage;
  subscriptionConfirmation(topicArn: string, opts?: { subscribeUrl?: string }): SnsMessage;
  sign(m: Omit<SnsMessage, 'Signature'>): SnsMessage;
}

/** A key pair and a self-signed certificate (openssl), valid for ten years. */
function makeCertificate(): { key: string; cert: string } {
  const dir = tempDir('svc-sns-');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
        '-days',
        '3650',
        '-subj',
        '/CN=sns.fake.test',
      ],
      { stdio: 'ignore' },
    );
    return { key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function startAwsFake(): Promise<AwsFake> {
  const { key, cert } = makeCertificate();
  const routes: FakeRoute[] = [];
  const requests: FakeRequest[] = [];
  const confirmed: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const r: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(r);
      let answer: FakeAnswer | undefined;
      try {
        for (const route of [...routes].reverse()) {
          answer = await route(r);
          if (answer) break;
        }
      } catch (error) {
        answer = { status: 500, body: String(error) };
      }
      answer ??= { status: 404, body: 'no route' };
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  routes.push((r) =>
    r.method === 'GET' && r.path === '/sns/cert.pem' ? { status: 200, body: cert, headers: { 'content-type': 'application/x-pem-file' } } : undefined,
  );
  routes.push((r) => {
    if (r.method !== 'GET' || r.path !== '/sns/confirm') return undefined;
    confirmed.push(r.query.get('Token') ?? '');
    return {
      status: 200,
      body: '<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>arn:aws:sns:us-east-1:123456789012:t:1</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>',
      headers: { 'content-type': 'text/xml' },
    };
  });

  const certUrl = `${url}/sns/cert.pem`;
  const sign = (m: Omit<SnsMessage, 'Signature'>): SnsMessage => {
    const full = { ...m, Signature: '' } as SnsMessage;
    full.Signature = createSign(m.SignatureVersion === '2' ? 'RSA-SHA256' : 'RSA-SHA1')
      .update(stringToSign(full), 'utf8')
      .sign(key, 'base64');
    return full;
  };
  const sns: SnsSigner = {
    certUrl,
    confirmed,
    sign,
    notification(topicArn, message, opts = {}) {
      return sign({
        Type: 'Notification',
        MessageId: randomUUID(),
        TopicArn: topicArn,
        ...(opts.subject ? { Subject: opts.subject } : {}),
        Message: typeof message === 'string' ? message : JSON.stringify(message),
        Timestamp: new Date().toISOString(),
        SignatureVersion: opts.version ?? '1',
        SigningCertURL: opts.certUrl ?? certUrl,
        UnsubscribeURL: `${url}/sns/unsubscribe`,
      });
    },
    subscriptionConfirmation(topicArn, opts = {}) {
      const token = randomUUID();
      return sign({
        Type: 'SubscriptionConfirmation',
        MessageId: randomUUID(),
        Token: token,
        TopicArn: topicArn,
        Message: `You have chosen to subscribe to the topic ${topicArn}.`,
        SubscribeURL: opts.subscribeUrl ?? `${url}/sns/confirm?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topicArn)}&Token=${token}`,
        Timestamp: new Date().toISOString(),
        SignatureVersion: '1',
        SigningCertURL: certUrl,
      });
    },
  };
  return {
    url,
    requests,
    route: (h) => routes.push(h),
    sns,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An SES bounce or complaint notification (the shape SES publishes to SNS). */
export function sesNotification(
  kind: 'Bounce' | 'Complaint',
  opts: {
    recipient: string;
    messageId?: string;
    headers?: { name: string; value: string }[];
    commonMessageId?: string;
    bounceType?: 'Permanent' | 'Transient';
    eventPublishing?: boolean;
  },
) {
  const mail = {
    timestamp: new Date().toISOString(),
    source: 'support@example.com',
    messageId: opts.messageId ?? `0100018f${randomUUID().replace(/-/g, '')}-000000`,
    destination: [opts.recipient],
    headersTruncated: false,
    headers: opts.headers ?? [],
    commonHeaders: { messageId: opts.commonMessageId, subject: 'News' },
  };
  const typeKey = opts.eventPublishing ? 'eventType' : 'notificationType';
  if (kind === 'Bounce') {
    return {
      [typeKey]: 'Bounce',
      bounce: {
        bounceType: opts.bounceType ?? 'Permanent',
        bounceSubType: 'General',
        bouncedRecipients: [{ emailAddress: opts.recipient, status: '5.1.1', action: 'failed' }],
        timestamp: new Date().toISOString(),
        feedbackId: randomUUID(),
      },
      mail,
    };
  }
  return {
    [typeKey]: 'Complaint',
    complaint: {
      complainedRecipients: [{ emailAddress: opts.recipient }],
      complaintFeedbackType: 'abuse',
      timestamp: new Date().toISOString(),
      feedbackId: randomUUID(),
    },
    mail,
  };
}
