// What the notification tests (test/notifications/team, inbox-limit) start from, one per test file:
// a server that tells by realtime, Web Push (to a loopback push service) and e-mail (to an SMTP sink),
// with a workspace whose Support inbox has an e-mail channel; its jobs run when a test drains them.
import type { ManualClock } from '../../src/platform/clock.js';
import { generateVapidKeys } from '../../src/push/commands.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { INGRESS_SECRET, seedEmailChannel } from './mail.js';
import { type FakeBrowser, fakeBrowser, type PushService, startPushService } from './push-service.js';
import { startTestServer, type TestServer } from './server.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

const VAPID = generateVapidKeys();
/** The VAPID subject the server signs its pushes with. */
export const SUBJECT = 'mailto:ops@notify.example';

export type Person = { personId: string; email: string; token: string };

export interface NotifyingServer {
  s: TestServer;
  clock: ManualClock;
  sink: SmtpSink;
  push: PushService;
  seed: Seed;
  /** The e-mail channel's address: mail delivered to it starts conversations in the Support inbox. */
  address: string;
  stop(): Promise<void>;
}

export async function startNotifyingServer(): Promise<NotifyingServer> {
  const sink = await startSmtpSink();
  const s = await startTestServer({
    env: {
      SVC_INGRESS_SECRET: INGRESS_SECRET,
      SVC_VAPID_PUBLIC_KEY: VAPID.publicKey,
      SVC_VAPID_PRIVATE_KEY: VAPID.privateKey,
      SVC_VAPID_SUBJECT: SUBJECT,
      // The loopback push service is on 127.0.0.1: pushes use the webhooks' address rules.
      SVC_WEBHOOK_ALLOW_PRIVATE: '1',
      SVC_SMTP_HOST: '127.0.0.1',
      SVC_SMTP_PORT: String(sink.port),
      SVC_SMTP_TLS: 'none',
      SVC_SMTP_FROM: 'svc@notify.example',
    },
  });
  const clock = s.clock as ManualClock;
  await s.app.jobs.stop();
  const push = await startPushService(VAPID.publicKey, () => Math.floor(clock.now().getTime() / 1000));
  const seed = await seedWorkspace(s.app);
  const address = (await seedEmailChannel(s.app, seed)).address!;
  const stop = async () => {
    await s.stop();
    await sink.close();
    await push.close();
  };
  return { s, clock, sink, push, seed, address, stop };
}

/** A push subscription of the person at the loopback push service, inserted directly: the API accepts only https endpoints on public addresses. */
export async function subscribeAt(s: TestServer, push: PushService, person: Person, name: string): Promise<{ id: string; path: string; browser: FakeBrowser }> {
  const browser = fakeBrowser();
  const path = `/push/${name}`;
  push.browsers.set(path, browser);
  const id = `push_test_${name}`;
  const now = s.app.clock.now().toISOString();
  await s.app.db
    .insertInto('push_subscriptions')
    .values({
      id,
      person_id: person.personId,
      endpoint: `${push.url}${path}`,
      key_p256dh: browser.p256dh,
      key_auth: browser.auth,
      expires_at: null,
      user_agent: name,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return { id, path, browser };
}
