// Every SVC_* setting is read here, once. Nothing else in the program reads process.env.
import { isIP } from 'node:net';
import path from 'node:path';
import { domainToASCII } from 'node:url';
import { z } from 'zod';
import { parseTrustedProxies } from './platform/client-address.js';

export class ConfigError extends Error {}

const flag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', ''])
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'yes' || v === 'on');

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** A whole number from `min` up (1 unless zero means something: "no limit", "at once"). */
const wholeNumber = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
      if (!(n >= min && n <= max)) {
        const range =
          max === Number.MAX_SAFE_INTEGER ? (min === 0 ? 'a whole number' : `a whole number of at least ${min}`) : `a whole number from ${min} to ${max}`;
        ctx.addIssue({ code: 'custom', message: `expected ${range}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });
const positiveInt = (fallback: number) => wholeNumber(fallback, 1);
const countOrZero = (fallback: number) => wholeNumber(fallback, 0);

/** A text setting that, when set, must pass `check` (which returns the problem, or null). */
const checkedText = (check: (v: string) => string | null) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return undefined;
    const problem = check(v);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return v;
  });

/** Whether text is a DNS host name (letters, digits and hyphens in dot-separated labels; an IDN is written in Unicode or as xn--). */
export function isDomainName(text: string): boolean {
  const ascii = domainToASCII(text.replace(/\.$/, ''));
  if (!ascii || ascii.length > 253) return false;
  return ascii.split('.').every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i.test(label));
}

function hostProblem(v: string): string | null {
  return isDomainName(v) || isIP(v.replace(/^\[|\]$/g, '')) ? null : `expected a host name or IP address, got "${v}"`;
}

/** An absolute http(s) URL without user, query or fragment. */
function httpUrlProblem(v: string): string | null {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return `expected an absolute http:// or https:// URL, got "${v}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `expected an absolute http:// or https:// URL, got "${v}"`;
  if (url.username || url.password || url.search || url.hash) return `expected a URL without user, query or fragment, got "${v}"`;
  return null;
}

const httpUrl = checkedText(httpUrlProblem);

/** An AWS region name such as eu-west-1 or us-gov-west-1. */
const awsRegion = checkedText((v) => (/^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/.test(v) ? null : `expected an AWS region such as eu-west-1, got "${v}"`));

/** An SNS topic ARN: arn:<partition>:sns:<region>:<account>:<topic>. */
const SNS_TOPIC_ARN = /^arn:aws(?:-[a-z]+)*:sns:[a-z]{2}(?:-[a-z]+)+-\d{1,2}:\d{12}:[A-Za-z0-9_-]{1,256}(?:\.fifo)?$/;

/** A Web Push (VAPID) key: base64url of `bytes` bytes. */
const vapidKey = (bytes: number, what: string) =>
  checkedText((v) =>
    /^[A-Za-z0-9_-]+={0,2}$/.test(v) && Buffer.from(v, 'base64url').length === bytes ? null : `expected ${what} (svc vapid-keys makes a pair)`,
  );

/** host:port; ":0" style random ports are allowed so tests can bind anywhere. */
const listenAddress = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const raw = v === undefined || v.trim() === '' ? fallback : v.trim();
      if (raw === 'off') return null;
      const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:]*)):(\d{1,5})$/.exec(raw);
      const port = m ? Number(m[3]) : NaN;
      if (!m || port > 65535) {
        ctx.addIssue({ code: 'custom', message: `expected host:port, got "${raw}"` });
        return z.NEVER;
      }
      return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
    });

const masterKey = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    const key = decodeKey(v.trim());
    if (!key) {
      ctx.addIssue({ code: 'custom', message: 'must be 32 bytes written as 64 hex digits or base64' });
      return z.NEVER;
    }
    return key;
  });

export function decodeKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(text)) {
    const buf = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (buf.length === 32) return buf;
  }
  return undefined;
}

const emailAddress = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    if (!/^[^\s@<>]+@[^\s@<>]+$/.test(v.trim())) {
      ctx.addIssue({ code: 'custom', message: `expected an e-mail address, got "${v}"` });
      return z.NEVER;
    }
    return v.trim();
  });

/** `Name <address@host>` or a bare address: the server's own mail shows the name. */
const mailbox = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    const text = v.trim();
    const named = /^"?([^"<>]*?)"?\s*<([^\s@<>]+@[^\s@<>]+)>$/.exec(text);
    if (named) return { name: named[1]!.trim() || undefined, address: named[2]! };
    if (/^[^\s@<>]+@[^\s@<>]+$/.test(text)) return { name: undefined, address: text };
    ctx.addIssue({ code: 'custom', message: `expected an e-mail address, or a name and an address such as "Acme Support <support@acme.example>", got "${v}"` });
    return z.NEVER;
  });

/**
 * Who the server's own mail comes from when SVC_SMTP_FROM is unset: "svc" at the public URL's host
 * (the name the team knows the server by), else at the SMTP host.
 */
function smtpFrom(given: { name?: string; address: string } | undefined, publicUrl: string | undefined, smtpHost: string) {
  const f = given ?? defaultFrom(publicUrl, smtpHost);
  return { from: f.address, fromName: f.name };
}

function defaultFrom(publicUrl: string | undefined, smtpHost: string): { name: string; address: string } {
  const host = publicUrl ? new URL(publicUrl).hostname : '';
  const usable = host.includes('.') && !/^[\d.]+$/.test(host) && !host.includes(':');
  return { name: 'svc', address: `svc@${usable ? host.replace(/^www\./, '') : smtpHost}` };
}

const schema = z.object({
  SVC_DATA_DIR: z
    .string()
    .optional()
    .transform((v) => path.resolve(v && v.trim() ? v.trim() : 'data')),
  SVC_HTTP_ADDR: listenAddress('0.0.0.0:8080'),
  SVC_METRICS_ADDR: listenAddress('127.0.0.1:9090'),
  SVC_SMTP_ADDR: listenAddress('0.0.0.0:2525'),
  SVC_PUBLIC_URL: httpUrl,
  SVC_DATABASE_URL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      if (!/^postgres(ql)?:\/\//.test(v.trim())) {
        ctx.addIssue({ code: 'custom', message: 'must start with postgres:// (leave unset for the embedded SQLite database)' });
        return z.NEVER;
      }
      return v.trim();
    }),
  SVC_DATABASE_POOL_SIZE: wholeNumber(10, 1, 1000),
  SVC_DATABASE_WAIT_MS: wholeNumber(5000, 1, 600_000),
  SVC_DATABASE_READERS: wholeNumber(2, 0, 16),
  SVC_MASTER_KEY: masterKey,
  SVC_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).optional().default('info'),
  SVC_SHUTDOWN_TIMEOUT_SECONDS: countOrZero(10),

  SVC_STORAGE: z.enum(['local', 's3']).optional().default('local'),
  SVC_S3_BUCKET: checkedText((v) =>
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(v) ? null : `expected a bucket name (3 to 63 lowercase letters, digits, dots or hyphens), got "${v}"`,
  ),
  SVC_S3_ENDPOINT: httpUrl,
  SVC_S3_REGION: awsRegion,
  SVC_S3_ACCESS_KEY_ID: optionalText,
  SVC_S3_SECRET_ACCESS_KEY: optionalText,
  SVC_S3_FORCE_PATH_STYLE: flag,
  SVC_S3_PREFIX: optionalText,

  SVC_SIGNUP: z.enum(['open', 'closed']).optional().default('closed'),
  SVC_BROADCASTS: z.enum(['on', 'approval']).optional(),
  SVC_BROADCAST_DAILY_RECIPIENTS: countOrZero(0),
  SVC_OPERATOR_EMAIL: emailAddress,

  SVC_MAILER_REGION: awsRegion,
  SVC_MAILER_ACCESS_KEY_ID: optionalText,
  SVC_MAILER_SECRET_ACCESS_KEY: optionalText,
  SVC_MAILER_CONFIGURATION_SET: checkedText((v) =>
    /^[A-Za-z0-9_-]{1,64}$/.test(v) ? null : `expected a configuration set name (up to 64 letters, digits, - or _), got "${v}"`,
  ),
  // Tenant names are `<prefix><inbox id>` (30 characters): letters, digits, - and _ , at most 64.
  SVC_MAILER_TENANT_PREFIX: z
    .string()
    .optional()
    .default('svc-')
    .refine((v) => /^[A-Za-z0-9_-]{0,34}$/.test(v), { message: 'at most 34 letters, digits, - or _ (tenant names are the prefix and the inbox id)' }),
  SVC_MAILER_TOPIC_ARNS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const arns = (v ?? '').split(/[\s,]+/).filter(Boolean);
      const bad = arns.find((a) => !SNS_TOPIC_ARN.test(a));
      if (bad) {
        ctx.addIssue({ code: 'custom', message: `expected SNS topic ARNs such as arn:aws:sns:eu-west-1:123456789012:svc-feedback, got "${bad}"` });
        return z.NEVER;
      }
      return arns;
    }),
  SVC_MAILER_ENDPOINT: httpUrl,

  SVC_SMTP_HOST: checkedText(hostProblem),
  SVC_SMTP_PORT: wholeNumber(587, 1, 65535),
  SVC_SMTP_TLS: z.enum(['starttls', 'tls', 'none']).optional().default('starttls'),
  SVC_SMTP_USERNAME: optionalText,
  SVC_SMTP_PASSWORD: optionalText,
  SVC_SMTP_FROM: mailbox,

  SVC_INGRESS_SECRET: optionalText,
  SVC_INGRESS_MAX_BYTES: positiveInt(30 * 1024 * 1024),
  SVC_ATTACHMENT_MAX_BYTES: positiveInt(25 * 1024 * 1024),

  SVC_VAPID_PUBLIC_KEY: vapidKey(65, 'a P-256 public key in base64url (87 characters)'),
  SVC_VAPID_PRIVATE_KEY: vapidKey(32, 'a P-256 private key in base64url (43 characters)'),
  SVC_VAPID_SUBJECT: optionalText,

  SVC_WEBHOOK_ALLOW_PRIVATE: flag,
  SVC_TRUSTED_PROXIES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseTrustedProxies(v);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  SVC_TRUSTED_PROXY_HEADER: z
    .string()
    .optional()
    .transform((v) => (v ?? '').trim().toLowerCase() || 'x-forwarded-for')
    .pipe(z.enum(['x-forwarded-for', 'forwarded'])),
  SVC_HSTS: z.enum(['on', 'off']).optional().default('on'),
  SVC_WIDGET_UPLOAD_SESSION_BYTES: positiveInt(50 * 1024 * 1024),
  SVC_WIDGET_UPLOAD_ADDRESS_BYTES: positiveInt(100 * 1024 * 1024),
  SVC_WIDGET_UPLOAD_WORKSPACE_DAILY_BYTES: positiveInt(1024 * 1024 * 1024),
  SVC_FORWARDING_DOMAIN: checkedText((v) => (isDomainName(v) ? null : `expected a domain name such as in.example.com, got "${v}"`)),
  SVC_EVENTS_RETENTION_DAYS: positiveInt(7),
  SVC_ANALYTICS_MONTHLY_EVENTS: countOrZero(0),
  SVC_ANALYTICS_RAW_DAYS: positiveInt(90),
  SVC_GEOIP_ACCOUNT_ID: optionalText,
  SVC_GEOIP_LICENSE_KEY: optionalText,

  SVC_MIGRATION_MAX_MESSAGE_BYTES: positiveInt(50 * 1024 * 1024),
  SVC_MIGRATION_SYNC_MAX_DAYS: positiveInt(30),
  SVC_MIGRATION_AUDIT_DAYS: positiveInt(365),
  SVC_MIGRATION_QUIET_HOURS: positiveInt(24),
  SVC_MIGRATION_ALLOW_PRIVATE: flag,
  /** Mailbox readers: seconds between polls of a server without IDLE (and of the Sent folder). */
  SVC_MAILBOX_READER_POLL_SECONDS: positiveInt(60),
  /** Mailbox readers: the first wait after a failure (doubling up to 30 times it). */
  SVC_MAILBOX_READER_RETRY_SECONDS: positiveInt(60),
  /** Test and development only: where the Zendesk and Help Scout APIs are read (a loopback fake). */
  SVC_MIGRATION_ZENDESK_URL: httpUrl,
  SVC_MIGRATION_HELPSCOUT_URL: httpUrl,

  SVC_GOOGLE_CLIENT_ID: optionalText,
  SVC_GOOGLE_CLIENT_SECRET: optionalText,
  SVC_MICROSOFT_CLIENT_ID: optionalText,
  SVC_MICROSOFT_CLIENT_SECRET: optionalText,
  SVC_MICROSOFT_TENANT: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const t = v === undefined || v.trim() === '' ? 'common' : v.trim();
      if (!/^[A-Za-z0-9.-]{1,100}$/.test(t)) {
        ctx.addIssue({ code: 'custom', message: 'expected a tenant id, a domain, or common, organizations or consumers' });
        return z.NEVER;
      }
      return t;
    }),
  // Development and tests only: where the providers' OAuth endpoints (<url>/<provider>/authorize,
  // …/token) and the IMAP server of sign-in providers are, instead of Google's and Microsoft's.
  SVC_OAUTH_ENDPOINT: optionalText,
  SVC_OAUTH_IMAP: listenAddress('off'),
  /** Development and tests: the sign-in providers' SMTP server (plain, no TLS) for channels that send with a sign-in. */
  SVC_OAUTH_SMTP: listenAddress('off'),
});

type Parsed = z.output<typeof schema>;
export type ListenAddress = { host: string; port: number };

export type Config = ReturnType<typeof shapeConfig>;

function shapeConfig(p: Parsed) {
  const mailerKeys = [p.SVC_MAILER_REGION, p.SVC_MAILER_ACCESS_KEY_ID, p.SVC_MAILER_SECRET_ACCESS_KEY, p.SVC_MAILER_CONFIGURATION_SET];
  const mailerSet = mailerKeys.filter((v) => v !== undefined).length;
  if (mailerSet !== 0 && mailerSet !== 4) {
    throw new ConfigError(
      'SVC_MAILER_REGION, SVC_MAILER_ACCESS_KEY_ID, SVC_MAILER_SECRET_ACCESS_KEY and SVC_MAILER_CONFIGURATION_SET must be set all four or none',
    );
  }
  if (p.SVC_STORAGE === 's3' && !p.SVC_S3_BUCKET) {
    throw new ConfigError('SVC_S3_BUCKET must be set when SVC_STORAGE is s3');
  }
  if (p.SVC_VAPID_PUBLIC_KEY && !p.SVC_VAPID_PRIVATE_KEY) {
    throw new ConfigError('SVC_VAPID_PRIVATE_KEY must be set together with SVC_VAPID_PUBLIC_KEY');
  }
  if (p.SVC_VAPID_SUBJECT && !/^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/.test(p.SVC_VAPID_SUBJECT)) {
    throw new ConfigError('SVC_VAPID_SUBJECT must be a mailto: address or an https: URL (push services contact the operator there)');
  }
  for (const [id, secret] of [
    ['SVC_GOOGLE_CLIENT_ID', 'SVC_GOOGLE_CLIENT_SECRET'],
    ['SVC_MICROSOFT_CLIENT_ID', 'SVC_MICROSOFT_CLIENT_SECRET'],
  ] as const) {
    if ((p[id] === undefined) !== (p[secret] === undefined)) throw new ConfigError(`${id} and ${secret} must be set together`);
  }
  if (p.SVC_OAUTH_ENDPOINT !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(p.SVC_OAUTH_ENDPOINT)) {
    throw new ConfigError('SVC_OAUTH_ENDPOINT must be an http(s) origin such as http://127.0.0.1:8099 (development and tests only)');
  }
  const http = p.SVC_HTTP_ADDR ?? { host: '0.0.0.0', port: 8080 };
  const publicHost = http.host === '0.0.0.0' || http.host === '::' ? '127.0.0.1' : http.host;
  return {
    dataDir: p.SVC_DATA_DIR,
    httpAddr: http,
    metricsAddr: p.SVC_METRICS_ADDR,
    smtpAddr: p.SVC_SMTP_ADDR,
    publicUrl: (p.SVC_PUBLIC_URL ?? `http://${publicHost}:${http.port}`).replace(/\/+$/, ''),
    /** False when publicUrl is only the listening address (the API document then names the address it was asked from). */
    publicUrlConfigured: p.SVC_PUBLIC_URL !== undefined,
    databaseUrl: p.SVC_DATABASE_URL,
    /** Postgres connections per process; how long a query waits for one (or for SQLite's write lock) before a 503 busy. */
    databasePool: { size: p.SVC_DATABASE_POOL_SIZE, waitMs: p.SVC_DATABASE_WAIT_MS },
    /** SQLite: threads that run long reads off the event loop (src/db/readers.ts); 0: none. Not used on Postgres. */
    databaseReaders: p.SVC_DATABASE_READERS,
    masterKey: p.SVC_MASTER_KEY,
    logLevel: p.SVC_LOG_LEVEL,
    shutdownTimeoutMs: p.SVC_SHUTDOWN_TIMEOUT_SECONDS * 1000,
    storage: {
      kind: p.SVC_STORAGE,
      localDir: path.join(p.SVC_DATA_DIR, 'files'),
      s3: {
        bucket: p.SVC_S3_BUCKET,
        endpoint: p.SVC_S3_ENDPOINT,
        region: p.SVC_S3_REGION ?? 'us-east-1',
        accessKeyId: p.SVC_S3_ACCESS_KEY_ID,
        secretAccessKey: p.SVC_S3_SECRET_ACCESS_KEY,
        forcePathStyle: p.SVC_S3_FORCE_PATH_STYLE,
        prefix: p.SVC_S3_PREFIX ?? '',
      },
    },
    signup: p.SVC_SIGNUP,
    broadcasts: {
      mode: p.SVC_BROADCASTS ?? (p.SVC_SIGNUP === 'open' ? 'approval' : 'on'),
      dailyRecipients: p.SVC_BROADCAST_DAILY_RECIPIENTS, // 0 = no server-wide limit
      operatorEmail: p.SVC_OPERATOR_EMAIL,
    },
    mailer:
      mailerSet === 4
        ? {
            region: p.SVC_MAILER_REGION!,
            accessKeyId: p.SVC_MAILER_ACCESS_KEY_ID!,
            secretAccessKey: p.SVC_MAILER_SECRET_ACCESS_KEY!,
            configurationSet: p.SVC_MAILER_CONFIGURATION_SET!,
            tenantPrefix: p.SVC_MAILER_TENANT_PREFIX,
            endpoint: p.SVC_MAILER_ENDPOINT,
          }
        : undefined,
    mailerTopicArns: p.SVC_MAILER_TOPIC_ARNS,
    /** SVC_MAILER_ENDPOINT (tests): AWS calls go there, and SNS signing certificates and subscribe URLs are accepted from its origin. */
    mailerEndpoint: p.SVC_MAILER_ENDPOINT,
    smtp: p.SVC_SMTP_HOST
      ? {
          host: p.SVC_SMTP_HOST,
          port: p.SVC_SMTP_PORT,
          tls: p.SVC_SMTP_TLS,
          username: p.SVC_SMTP_USERNAME,
          password: p.SVC_SMTP_PASSWORD,
          ...smtpFrom(p.SVC_SMTP_FROM, p.SVC_PUBLIC_URL, p.SVC_SMTP_HOST),
        }
      : undefined,
    ingress: p.SVC_INGRESS_SECRET ? { secret: p.SVC_INGRESS_SECRET, maxBytes: p.SVC_INGRESS_MAX_BYTES } : undefined,
    /** Largest inbound message (SMTP SIZE, POST /v1/ingress/email, svc ingest-email). */
    ingressMaxBytes: p.SVC_INGRESS_MAX_BYTES,
    /** Largest attachment uploaded through the API. */
    attachmentMaxBytes: p.SVC_ATTACHMENT_MAX_BYTES,
    vapid: p.SVC_VAPID_PUBLIC_KEY ? { publicKey: p.SVC_VAPID_PUBLIC_KEY, privateKey: p.SVC_VAPID_PRIVATE_KEY!, subject: p.SVC_VAPID_SUBJECT } : undefined,
    webhookAllowPrivate: p.SVC_WEBHOOK_ALLOW_PRIVATE,
    /** Whose forwarding header is believed for the client address (src/http/client-address.ts). */
    clientAddress: { trustedProxies: p.SVC_TRUSTED_PROXIES, proxyHeader: p.SVC_TRUSTED_PROXY_HEADER },
    /** Strict-Transport-Security on every answer: with an https SVC_PUBLIC_URL, unless SVC_HSTS=off (the proxy sends it). */
    hsts: p.SVC_HSTS === 'on' && (p.SVC_PUBLIC_URL ?? '').trim().startsWith('https://'),
    /** Bytes of widget uploads not yet sent, per visitor session and per client address; uploads per workspace per day. */
    widgetUploads: {
      sessionBytes: p.SVC_WIDGET_UPLOAD_SESSION_BYTES,
      addressBytes: p.SVC_WIDGET_UPLOAD_ADDRESS_BYTES,
      workspaceDailyBytes: p.SVC_WIDGET_UPLOAD_WORKSPACE_DAILY_BYTES,
    },
    forwardingDomain: p.SVC_FORWARDING_DOMAIN?.toLowerCase(),
    eventsRetentionDays: p.SVC_EVENTS_RETENTION_DAYS,
    analytics: {
      /** A workspace's monthly event limit when it has none of its own; 0 = no limit. */
      monthlyEvents: p.SVC_ANALYTICS_MONTHLY_EVENTS,
      /** Raw events and visits are kept this many days (rollups stay). */
      rawDays: Math.max(1, p.SVC_ANALYTICS_RAW_DAYS),
      /** MaxMind account for `svc analytics geoip-update --source maxmind`. */
      maxmind: p.SVC_GEOIP_ACCOUNT_ID && p.SVC_GEOIP_LICENSE_KEY ? { accountId: p.SVC_GEOIP_ACCOUNT_ID, licenseKey: p.SVC_GEOIP_LICENSE_KEY } : undefined,
    },
    migration: {
      maxMessageBytes: p.SVC_MIGRATION_MAX_MESSAGE_BYTES,
      syncMaxDays: p.SVC_MIGRATION_SYNC_MAX_DAYS,
      auditDays: p.SVC_MIGRATION_AUDIT_DAYS,
      quietHours: p.SVC_MIGRATION_QUIET_HOURS,
      /** Lets migrations read IMAP servers on private or loopback addresses (a LAN mail server, tests). */
      allowPrivate: p.SVC_MIGRATION_ALLOW_PRIVATE,
      /** Test and development only: API base URLs replacing https://<subdomain>.zendesk.com and https://api.helpscout.net. */
      zendeskUrl: p.SVC_MIGRATION_ZENDESK_URL,
      helpScoutUrl: p.SVC_MIGRATION_HELPSCOUT_URL,
    },
    /** Channels that read their own mailbox (src/mailbox-reader). */
    mailboxReader: { pollMs: p.SVC_MAILBOX_READER_POLL_SECONDS * 1000, retryMs: p.SVC_MAILBOX_READER_RETRY_SECONDS * 1000 },
    /** OAuth clients of the providers whose mailboxes connect with a sign-in (Google, Microsoft). */
    oauth: {
      google: p.SVC_GOOGLE_CLIENT_ID ? { clientId: p.SVC_GOOGLE_CLIENT_ID, clientSecret: p.SVC_GOOGLE_CLIENT_SECRET! } : undefined,
      microsoft: p.SVC_MICROSOFT_CLIENT_ID
        ? { clientId: p.SVC_MICROSOFT_CLIENT_ID, clientSecret: p.SVC_MICROSOFT_CLIENT_SECRET!, tenant: p.SVC_MICROSOFT_TENANT }
        : undefined,
      /** Development and tests: the providers' endpoints under this origin instead of theirs. */
      endpoint: p.SVC_OAUTH_ENDPOINT?.replace(/\/$/, ''),
      /** Development and tests: the sign-in providers' IMAP server (plain, no TLS) instead of theirs. */
      imap: p.SVC_OAUTH_IMAP ?? undefined,
      /** Development and tests: the sign-in providers' SMTP server (plain, no TLS) instead of smtp.gmail.com / smtp.office365.com. */
      smtp: p.SVC_OAUTH_SMTP ?? undefined,
    },
  };
}

/** Parses the environment. Throws ConfigError with one line naming the first bad setting. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const svcEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith('SVC_') && v !== undefined) svcEnv[k] = v;
  const result = schema.safeParse(svcEnv);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = String(issue.path[0] ?? '');
    const shown = issue.code === 'invalid_value' ? `must be one of ${issue.values.join(', ')}` : issue.message;
    throw new ConfigError(`invalid setting ${key}: ${shown}`);
  }
  return shapeConfig(result.data);
}

/** Warnings the spec lists for features that are off by configuration. */
export function featureWarnings(config: Config): string[] {
  const out: string[] = [];
  if (!config.smtp) out.push('SVC_SMTP_HOST is not set');
  if (!config.ingress) out.push('SVC_INGRESS_SECRET is not set');
  if (!config.vapid) out.push('SVC_VAPID_PUBLIC_KEY is not set');
  return out;
}
