// Shared set-up of the automation tests: the real server with a moved clock, jobs drained by hand,
// a workspace whose e-mail channel sends through an SMTP sink.
import { ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, startMailingServer } from '../helpers/mail.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

export interface World {
  s: TestServer;
  seed: Seed;
  address: string;
  sink: SmtpSink;
  clock: ManualClock;
  agent: { personId: string; token: string };
  api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  drain(): Promise<number>;
  mail(headers?: Record<string, string>, body?: string): Promise<{ conversation_id: string; message_id: string }>;
  rule(body: Record<string, unknown>): Promise<any>;
  conversation(id: string): Promise<any>;
  runs(query?: string): Promise<any[]>;
  stop(): Promise<void>;
}

export async function world(start = new Date('2026-11-08T15:00:00Z')): Promise<World> {
  const clock = new ManualClock(start);
  const { s, seed, address, sink } = await startMailingServer({ ingressSecret: INGRESS_SECRET, clock });
  const agent = await addPerson(s.app, seed.workspaceId, 'agent');
  const api = async (method: string, path: string, body?: unknown, token = seed.apiKey) => s.request(method, path, { token, body });
  let n = 0;
  const w: World = {
    s,
    seed,
    address,
    sink,
    clock,
    agent,
    api,
    drain: () => s.app.jobs.drain(),
    mail: (headers = {}, body) => deliverMail(s, address, { From: 'Ada <ada@customer.example>', Subject: `Hello ${++n}`, ...headers }, body),
    async rule(body) {
      const r = await api('POST', '/v1/automation/rules', { enabled: true, ...body });
      if (r.status !== 201) throw new Error(`rule refused: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async conversation(id) {
      return (await api('GET', `/v1/conversations/${id}`)).body;
    },
    async runs(query = '') {
      return (await api('GET', `/v1/automation/runs?limit=200${query}`)).body.data;
    },
    async stop() {
      await s.stop();
      await sink.close();
    },
  };
  return w;
}

/** Turns every rule of the workspace off (between table rows). */
export async function disableAll(w: World): Promise<void> {
  for (const r of (await w.api('GET', '/v1/automation/rules')).body.data) await w.api('PATCH', `/v1/automation/rules/${r.id}`, { enabled: false });
}
