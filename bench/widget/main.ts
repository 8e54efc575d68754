// The chat widget's figures: the gzip size of what a site loads before the visitor opens the chat,
// and the time from a visitor's send (POST /v1/widget/…/messages) to the team's realtime event
// (message.created on /v1/realtime), over a bounded number of sends against a local server.
//   node dist/bench/widget/main.js [sends=200]
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import { systemClock } from '../../src/platform/clock.js';
import { seedWorkspace } from '../../test/helpers/fixtures.js';
import { startTestServer } from '../../test/helpers/server.js';
import { INITIAL_LOAD_BUDGET_BYTES, initialLoad } from '../../test/helpers/widget-script.js';
import { figure } from '../lib.js';

const ORIGIN = 'https://shop.example.com';
const sends = Math.min(1000, Number(process.argv[2] ?? 200));

const s = await startTestServer({ clock: systemClock });
try {
  const load = await initialLoad(s.url);
  figure('widget_initial_load_gzip', load.gzipBytes, 'bytes');
  figure('widget_initial_load_budget', INITIAL_LOAD_BUDGET_BYTES, 'bytes');

  const seed = await seedWorkspace(s.app);
  const key = (await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Bench', origins: [ORIGIN], allowAnonymous: true }))
    .public_key!;
  const headers = { origin: ORIGIN };
  // A session may send 30 messages a minute: every 25 sends a new visitor takes over.
  async function newVisitor() {
    const session = await s.request('POST', '/v1/widget/sessions', { body: { public_key: key }, headers });
    const started = await s.request('POST', '/v1/widget/conversations', { token: session.body.token, body: { body: 'first' }, headers });
    return { token: session.body.token as string, conversationId: started.body.conversation.id as string };
  }
  let visitor = await newVisitor();

  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/realtime?workspace=${seed.workspaceId}`, {
    headers: { authorization: `Bearer ${seed.ownerToken}` },
  });
  const waiting = new Map<string, (t: number) => void>();
  const early = new Map<string, number>();
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.on('message', (d) => {
      const frame = JSON.parse(d.toString());
      if (frame.type === 'live') resolve();
      if (frame.type === 'event' && frame.event.type === 'message.created') {
        const id = frame.event.data.message.id as string;
        const now = performance.now();
        const done = waiting.get(id);
        if (done) done(now);
        else early.set(id, now);
      }
    });
  });

  const times: number[] = [];
  for (let i = 0; i < sends; i++) {
    if (i > 0 && i % 25 === 0) visitor = await newVisitor();
    const t0 = performance.now();
    const r = await s.request('POST', `/v1/widget/conversations/${visitor.conversationId}/messages`, {
      token: visitor.token,
      body: { body: `message ${i}` },
      headers,
    });
    if (r.status !== 201) throw new Error(`send answered ${r.status}: ${JSON.stringify(r.body)}`);
    const id = r.body.id as string;
    const arrived = early.get(id) ?? (await new Promise<number>((resolve) => waiting.set(id, resolve)));
    times.push(arrived - t0);
  }
  ws.close();
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))];
  figure('widget_send_to_agent_event_p50', pct(50), 'ms');
  figure('widget_send_to_agent_event_p95', pct(95), 'ms');
  figure('widget_send_to_agent_event_max', times.at(-1)!, 'ms');
  figure('widget_sends', times.length, '');
} finally {
  await s.stop();
}
