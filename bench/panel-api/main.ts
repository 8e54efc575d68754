// bench/panel-api: the answers the panel waits for, on a workspace the size a busy team has after a
// year (bench/panel-api/workspace.ts: 1,000,000 messages, 150,000 conversations, 40,000 contacts,
// 30 members, 5 inboxes). The real `svc serve` runs on the kept database; 20 clients on 127.0.0.1,
// signed in with a member's session cookie, make the panel's requests: the conversation list of
// each sidebar view (first pages, and deep pages reached by following next_cursor), opening a
// conversation (the conversation and its messages together, then its contact, as ConversationView
// does), search (a common word, a rare one, a phrase), the contacts list and its search, reports for
// 30 and 365 days, and the overview. Prints the p95 of each kind (goals: lists and opening ≤ 20 ms,
// search ≤ 50 ms, a year's report ≤ 200 ms) and the server's peak RSS (goal ≤ 300 MB), first with
// the clients sending back to back, then as people who think between actions (`users_…`).
//
//   npm run build && node dist/bench/panel-api/main.js
//   SVC_TEST_DATABASE_URL=postgres://svc:svc@127.0.0.1:5432/postgres node dist/bench/panel-api/main.js
//   BENCH_SCALE=0.1 (a tenth of the workspace), BENCH_REQUESTS (per client, default 60),
//   BENCH_CLIENTS (default 20), BENCH_THINK_MS (the people phase's mean think time, default 2000;
//   0 skips it), BENCH_CACHE_DIR (where the built workspace is kept)
import os from 'node:os';
import { sql } from 'kysely';
import { createSession } from '../../src/people/service.js';
import { startTestServer } from '../../test/helpers/server.js';
import { figure, startBenchServer } from '../lib.js';
import { COMMON_WORD, PHRASE, RARE_WORD } from './text.js';
import { type PanelWorkspace, panelWorkspace } from './workspace.js';

const CLIENTS = Math.min(50, Number(process.env.BENCH_CLIENTS ?? 20));
const PER_CLIENT = Math.min(1000, Number(process.env.BENCH_REQUESTS ?? 60));
const THINK_MS = Math.min(60_000, Number(process.env.BENCH_THINK_MS ?? 2000));
const LIST_PAGE = 100; // ConversationList's page
const CONTACTS_PAGE = 50; // ContactsPage's page
const DAY_MS = 86_400_000;

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : Number.NaN;
}

/** A fresh session for the workspace's owner (also applies migrations added since the workspace was built, and vacuums Postgres). */
async function signIn(ws: PanelWorkspace): Promise<string> {
  const s = await startTestServer({ testEnv: { env: ws.env, dataDir: ws.env.SVC_DATA_DIR, cleanup: async () => {} } });
  await s.app.jobs.stop();
  // Postgres: vacuumed as autovacuum would have done after the build's inserts and the migrations
  // (index-only scans need the visibility map); cheap when nothing changed since the last run.
  if (ws.dialect === 'postgres') await sql`vacuum analyze`.execute(s.app.db);
  const { token } = await createSession(s.app, ws.ownerId);
  await s.stop();
  return token;
}

async function main() {
  const t0 = performance.now();
  const ws = await panelWorkspace();
  figure('dialect', ws.dialect);
  figure('scale', ws.scale);
  for (const [k, v] of Object.entries(ws.counts)) figure(k, v);
  figure('workspace_ready_seconds', (performance.now() - t0) / 1000, 's');
  figure('workspace_build_seconds', ws.buildSeconds, 's');
  const cookie = `svc_session=${await signIn(ws)}`;
  const server = await startBenchServer({ ...ws.env, SVC_LOG_LEVEL: 'info' });
  // The server's last words, should it stop before the end.
  let tail = '';
  const serverErrors: string[] = [];
  server.child.stderr!.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
    for (const line of chunk.toString().split('\n')) if (line.includes('"level":"error"') && serverErrors.length < 5) serverErrors.push(line.slice(0, 2000));
  });
  server.child.once('exit', (code, signal) => {
    if (!stopping) process.stderr.write(`server exited (${code ?? signal}):\n${tail}\n`);
  });
  let stopping = false;
  let peakRss = server.rssMb();
  const rssTimer = setInterval(() => {
    peakRss = Math.max(peakRss, server.rssMb());
  }, 100);

  const errors: string[] = [];
  const get = async (url: string): Promise<any> => {
    // One retry when a kept-alive connection was closed under the request (as a browser does for a GET).
    const r = await fetch(server.url + url, { headers: { cookie } }).catch(() => fetch(server.url + url, { headers: { cookie } }));
    const text = await r.text();
    if (r.status !== 200) {
      // Counted and shown at the end (with the server's log), not thrown: one failing kind keeps the others' figures.
      errors.push(`GET ${url}: ${r.status} ${text.slice(0, 300)}`);
      return { next_cursor: null };
    }
    return JSON.parse(text);
  };

  // The sidebar's lists, as ConversationList asks for them.
  const base = `limit=${LIST_PAGE}&spam=false`;
  const views: string[] = [
    `sort=activity&status=open&${base}`,
    `sort=activity&status=open&assignee_id=${ws.ownerId}&${base}`,
    `sort=activity&status=open&assignee_id=none&${base}`,
    `sort=activity&status=pending&${base}`,
    `sort=activity&status=closed&${base}`,
    `sort=activity&snoozed=true&${base}`,
    `sort=sla_due&status=open&${base}`,
    `sort=activity&status=open&label=${ws.labels[0]}&${base}`,
    `sort=activity&status=closed&label=${ws.labels[1]}&${base}`,
    `sort=activity&status=closed&assignee_id=${ws.ownerId}&${base}`,
    ...ws.inboxIds.map((inbox) => `sort=activity&status=open&inbox_id=${inbox}&${base}`),
    `sort=activity&status=closed&inbox_id=${ws.inboxIds[2]}&${base}`,
  ];
  // Deep pages: the cursors scrolling reaches (pages 2, 3, then every 10th down to page 60: 6,000 rows in).
  const deep: string[] = [];
  for (const v of views) {
    let cursor: string | null = (await get(`/v1/conversations?${v}`)).next_cursor;
    for (let page = 2; cursor && page <= 60; page++) {
      if (page % 10 === 0 || page <= 3) deep.push(`${v}&cursor=${encodeURIComponent(cursor)}`);
      cursor = (await get(`/v1/conversations?${v}&cursor=${encodeURIComponent(cursor)}`)).next_cursor;
    }
  }
  figure('deep_pages', deep.length);
  const anchor = new Date(ws.anchor).getTime();
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const to = day(anchor - DAY_MS);
  const searches = [COMMON_WORD, RARE_WORD, PHRASE, 'invoice address', 'damaged', ws.contactQueries[0]?.split(' ')[0] ?? 'ada'];
  const contacts = [
    `limit=${CONTACTS_PAGE}`,
    `limit=${CONTACTS_PAGE}&has_open=true`,
    ...ws.contactQueries.map((q) => `limit=${CONTACTS_PAGE}&q=${encodeURIComponent(q)}`),
  ];

  type Kind = 'list' | 'list_deep' | 'open' | 'search' | 'contacts' | 'report_month' | 'report_year' | 'overview';
  const kinds: Kind[] = ['list', 'list_deep', 'open', 'search', 'contacts', 'report_month', 'report_year', 'overview'];
  const run = async (kind: Kind, i: number): Promise<void> => {
    switch (kind) {
      case 'list':
        return void (await get(`/v1/conversations?${views[i % views.length]}`));
      case 'list_deep':
        return void (await get(`/v1/conversations?${deep[i % deep.length]}`));
      case 'open': {
        const id = ws.sample[(i * 7) % ws.sample.length];
        const [conv] = await Promise.all([get(`/v1/conversations/${id}`), get(`/v1/conversations/${id}/messages?order=desc&limit=200`)]);
        if (conv.contact_id) await get(`/v1/contacts/${conv.contact_id}`);
        return;
      }
      case 'search':
        return void (await get(`/v1/search?q=${encodeURIComponent(searches[i % searches.length])}&limit=50`));
      case 'contacts':
        return void (await get(`/v1/contacts?${contacts[i % contacts.length]}`));
      case 'report_month':
        return void (await get(`/v1/reports?from=${day(anchor - 30 * DAY_MS)}&to=${to}${i % 3 === 1 ? `&inbox_id=${ws.inboxIds[1]}` : ''}`));
      case 'report_year':
        return void (await get(`/v1/reports?from=${day(anchor - 365 * DAY_MS)}&to=${to}${i % 3 === 1 ? `&member_id=${ws.memberIds[3]}` : ''}`));
      case 'overview':
        return void (await get('/v1/overview'));
    }
  };
  // Warm-up, then each kind alone (one client, 8 requests): what a request costs without queueing
  // behind the other clients' on the server's one thread.
  for (const k of kinds) for (let i = 0; i < 3; i++) await run(k, i);
  for (const k of kinds) {
    const solo: number[] = [];
    for (let i = 0; i < 8; i++) {
      const t = performance.now();
      await run(k, i * 5 + 1);
      solo.push(performance.now() - t);
    }
    figure(
      `${k}_solo_p50`,
      percentile(
        solo.sort((a, b) => a - b),
        0.5,
      ),
      'ms',
    );
  }

  // 20 clients, each sending its next request as soon as the last is answered (the issue's load),
  // then, unless BENCH_THINK_MS=0, 20 people using the panel: each waits a think time (exponential,
  // mean BENCH_THINK_MS) between actions, as a member reading a conversation does. Figures of the
  // second phase are prefixed `users_`.
  const phase = async (prefix: string, thinkMs: number, seed: number) => {
    let x = seed >>> 0;
    const uniform = () => {
      x = (x + 0x6d2b79f5) >>> 0;
      let t = Math.imul(x ^ (x >>> 15), 1 | x);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
    const times = new Map<Kind, number[]>(kinds.map((k) => [k, []]));
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let n = 0; n < PER_CLIENT; n++) {
          if (thinkMs > 0) await new Promise((r) => setTimeout(r, -Math.log(1 - uniform()) * thinkMs));
          const kind = kinds[(client + n) % kinds.length];
          const t = performance.now();
          await run(kind, client * PER_CLIENT + n);
          times.get(kind)!.push(performance.now() - t);
        }
      }),
    );
    const wall = (performance.now() - started) / 1000;
    for (const [, list] of times) list.sort((a, b) => a - b);
    const all = (...ks: Kind[]) => ks.flatMap((k) => times.get(k)!).sort((a, b) => a - b);
    figure(`${prefix}clients`, CLIENTS);
    if (thinkMs > 0) figure(`${prefix}think_mean`, thinkMs, 'ms');
    figure(`${prefix}requests`, CLIENTS * PER_CLIENT);
    figure(`${prefix}requests_per_second`, (CLIENTS * PER_CLIENT) / wall);
    figure(`${prefix}list_first_p95`, percentile(times.get('list')!, 0.95), 'ms');
    figure(`${prefix}list_deep_p95`, percentile(times.get('list_deep')!, 0.95), 'ms');
    figure(`${prefix}list_p50`, percentile(all('list', 'list_deep'), 0.5), 'ms');
    figure(`${prefix}list_p95`, percentile(all('list', 'list_deep'), 0.95), 'ms');
    for (const k of ['open', 'search', 'contacts', 'report_month', 'report_year', 'overview'] as const) {
      figure(`${prefix}${k}_p50`, percentile(times.get(k)!, 0.5), 'ms');
      figure(`${prefix}${k}_p95`, percentile(times.get(k)!, 0.95), 'ms');
    }
  };
  await phase('', 0, 1);
  if (THINK_MS > 0) await phase('users_', THINK_MS, 2);
  clearInterval(rssTimer);
  peakRss = Math.max(peakRss, server.rssMb());
  figure('rss', peakRss, 'MB');
  figure(
    'load_average',
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  );
  figure('errors', errors.length);
  if (errors.length) process.stderr.write(`first errors:\n${errors.slice(0, 5).join('\n')}\nserver errors:\n${serverErrors.join('\n')}\n`);
  stopping = true;
  await server.stop();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
