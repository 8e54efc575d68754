// What the Amazon SES tenant tests (test/mailer-tenants/*) share: the fake account's keys, the job a
// channel save stores, and the scene most of them start from, one per test file: the AWS fake with
// SES and STS, an SMTP sink standing for SES's SMTP endpoint (it answers with SES-style message ids),
// one for the operator's mail, and a server with SVC_MAILER_* set whose jobs run when a test drains
// them, with a workspace and a second inbox, Sales.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { type AwsFake, startAwsFake } from './aws.js';
import { TOPIC } from './broadcasts.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { INGRESS_SECRET } from './mail.js';
import { runSvc, startTestServer, type TestEnv, type TestServer, testEnv } from './server.js';
import { installSesFake, type SesFake } from './ses-fake.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

export const ACCOUNT = '111111111111';
export const SERVER_KEY = 'AKIASERVERKEY0000001';
export const MANAGED_KEY = 'AKIAMANAGEDSMTP00001';
export const OTHER_KEY = 'AKIAOTHERACCOUNT0001';
export const SMTP_PASSWORD = 'ses-smtp-password';
export const SES_HOST = 'email-smtp.us-east-1.amazonaws.com';

/** The `mailer.channel_saved` job a channel save stores in its own transaction (src/mailer-tenants/reaction.ts). */
export async function savedSignalJob(db: TestServer['app']['db'], channelId: string) {
  const rows = await db.selectFrom('jobs').select(['payload']).where('kind', '=', 'mailer.channel_saved').execute();
  return rows
    .map((r) => JSON.parse(r.payload) as { channelId: string; former?: { inboxId: string; smtpHost: string | null } })
    .find((p) => p.channelId === channelId);
}

export interface TenantsStarted {
  te: TestEnv;
  s: TestServer;
  aws: AwsFake;
  ses: SesFake;
  /** SES's SMTP endpoint: managed channels send here (login MANAGED_KEY). */
  sink: SmtpSink;
  /** Where the operator's mail goes. */
  operator: SmtpSink;
  clock: ManualClock;
  seed: Seed;
  /** The workspace's second inbox, Sales. */
  inboxC: string;
}

/**
 * Call inside a `describe`: starts the scene before its tests (handing it to `onStart`) and stops it
 * after.
 */
export function tenantsScene(onStart: (started: TenantsStarted) => void) {
  let te: TestEnv;
  let s: TestServer;
  let aws: AwsFake;
  let ses: SesFake;
  let sink: SmtpSink;
  let operator: SmtpSink;
  let seed: Seed;
  const svc = (args: string[]) => runSvc(args, { env: s.env });
  let sesIds = 0;

  before(async () => {
    aws = await startAwsFake();
    ses = installSesFake(aws, {
      account: ACCOUNT,
      serverKey: SERVER_KEY,
      keyAccounts: { [MANAGED_KEY]: ACCOUNT, [OTHER_KEY]: '222222222222' },
      identities: [{ IdentityName: 'shop.example', IdentityType: 'DOMAIN' }],
    });
    sink = await startSmtpSink({
      username: MANAGED_KEY,
      password: SMTP_PASSWORD,
      answer: () => `Ok 0100018f00000000-${String(++sesIds).padStart(8, '0')}-0000-0000-0000-000000000000-000000`,
    });
    operator = await startSmtpSink();
    te = await testEnv({
      SVC_MAILER_REGION: 'us-east-1',
      SVC_MAILER_ACCESS_KEY_ID: SERVER_KEY,
      SVC_MAILER_SECRET_ACCESS_KEY: 'server-secret-key-do-not-leak',
      SVC_MAILER_CONFIGURATION_SET: 'svc-feedback-set',
      SVC_MAILER_ENDPOINT: aws.url,
      SVC_MAILER_TOPIC_ARNS: TOPIC,
      SVC_INGRESS_SECRET: INGRESS_SECRET,
      SVC_OPERATOR_EMAIL: 'operator@ops.example',
      SVC_SMTP_HOST: '127.0.0.1',
      SVC_SMTP_PORT: String(operator.port),
      SVC_SMTP_TLS: 'none',
    });
    s = await startTestServer({ testEnv: te });
    const clock = s.clock as ManualClock;
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    const inboxC = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' })).id;
    onStart({ te, s, aws, ses, sink, operator, clock, seed, inboxC });
  });
  after(async () => {
    await s.stop();
    await te.cleanup();
    await aws.close();
    await sink.close();
    await operator.close();
  });

  /** A channel sending through SES's SMTP endpoint with `username`'s key, saved through the API; its upkeep is run. */
  async function managedChannel(inboxId: string, address: string, username = MANAGED_KEY) {
    const r = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: {
        kind: 'email',
        inbox_id: inboxId,
        name: 'News',
        address,
        smtp_host: SES_HOST,
        smtp_port: sink.port,
        tls: 'none',
        smtp_username: username,
        smtp_password: SMTP_PASSWORD,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.ok(await savedSignalJob(s.app.db, r.body.id), 'the upkeep is stored with the channel');
    await s.app.jobs.drain();
    return r.body.id as string;
  }
  const tenantOf = (inboxId: string) => ses.tenants.get(`svc-${inboxId}`);
  const row = (inboxId: string) => s.app.db.selectFrom('mailer_tenants').selectAll().where('inbox_id', '=', inboxId).executeTakeFirst();
  return { svc, managedChannel, tenantOf, row };
}
