// bench/automation: what automation rules cost per inbound message (issue 36). Two workspaces in one
// server: one with no rules (the floor: ingest, the reactions and the jobs every mail has) and one
// with 20 enabled rules on customer_message (subject, body pattern, sender domain, label, status,
// business-hours conditions; two of them match and act). The same mails go to each through the
// ingress API, then the jobs are drained; the process CPU per message of both is measured in the
// same run. Prints the extra CPU per message and its ratio to the floor (goal ≤ 10 %). The client
// (fetch in this process) is inside both figures alike. BENCH_ACTING=0 measures evaluation alone.
//
//   npm run build && node dist/bench/automation/main.js
//   SVC_TEST_DATABASE_URL=postgres://… node dist/bench/automation/main.js   (Postgres)
//   (BENCH_MESSAGES changes the count, BENCH_ROUNDS the alternating rounds; `ratio` is their median)
import { type Seed, seedWorkspace } from '../../test/helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../../test/helpers/mail.js';
import { startTestServer, type TestServer } from '../../test/helpers/server.js';
import { figure, median } from '../lib.js';

const MESSAGES = Math.min(5000, Number(process.env.BENCH_MESSAGES ?? 400));
const WARMUP = 50;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 8));
/** BENCH_ACTING=0: no rule matches (the cost of evaluating alone); default 2 rules act on every mail. */
const ACTING = Number(process.env.BENCH_ACTING ?? 2);

function rules(i: number) {
  const conditions = [
    { field: 'subject', operator: 'contains', value: `never-${i}` },
    { field: 'body', operator: 'matches', value: `order #${i}\\d{4}` },
    { field: 'sender_domain', operator: 'is', value: `shop-${i}.example` },
    { field: 'label', operator: 'has', value: `vip-${i}` },
    { field: 'status', operator: 'is', value: 'pending' },
  ];
  // Rules 0 and 1 match every mail (all of: status open, inside business hours) and label it.
  if (i < ACTING)
    return {
      name: `rule ${i}`,
      enabled: true,
      trigger: { type: 'customer_message' },
      conditions: {
        match: 'all',
        items: [
          { field: 'status', operator: 'is', value: 'open' },
          { field: 'business_hours', operator: 'inside' },
        ],
      },
      actions: [{ type: 'add_label', label: `seen-${i}` }],
    };
  return {
    name: `rule ${i}`,
    enabled: true,
    trigger: { type: 'customer_message' },
    conditions: { match: 'any', items: conditions },
    actions: [
      { type: 'add_label', label: `hit-${i}` },
      { type: 'set_priority', priority: 'high' },
    ],
  };
}

async function ingest(s: TestServer, address: string, from: number, count: number): Promise<number> {
  const before = process.cpuUsage();
  for (let n = from; n < from + count; n++)
    await deliverMail(s, address, { From: `Customer ${n} <c${n}@customer.example>`, Subject: `Question ${n}` }, `Hello, about order #${n}.\r\n`);
  await s.app.jobs.drain();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

async function main() {
  const s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
  await s.app.jobs.stop();
  const dialect = process.env.SVC_TEST_DATABASE_URL ? 'postgres' : 'sqlite';
  const setUp = async (withRules: boolean): Promise<{ seed: Seed; address: string }> => {
    const seed = await seedWorkspace(s.app);
    const address = (await seedEmailChannel(s.app, seed)).address!;
    if (withRules)
      for (let i = 0; i < 20; i++) {
        const r = await s.request('POST', '/v1/automation/rules', { token: seed.apiKey, body: rules(i) });
        if (r.status !== 201) throw new Error(JSON.stringify(r.body));
      }
    return { seed, address };
  };
  const bare = await setUp(false);
  const ruled = await setUp(true);
  await ingest(s, bare.address, 0, WARMUP);
  await ingest(s, ruled.address, 0, WARMUP);
  // Alternating rounds, so that a slower moment of the shared machine weighs on both alike; the
  // median of the rounds' ratios is the figure (one loaded round cannot make it).
  let floorMs = 0;
  let rulesMs = 0;
  const roundRatios: number[] = [];
  const size = Math.max(1, Math.floor(MESSAGES / ROUNDS));
  for (let start = WARMUP; start < WARMUP + MESSAGES; start += size) {
    const count = Math.min(size, WARMUP + MESSAGES - start);
    const floor = await ingest(s, bare.address, start, count);
    const withRules = await ingest(s, ruled.address, start, count);
    floorMs += floor;
    rulesMs += withRules;
    roundRatios.push((withRules - floor) / floor);
  }
  const runs = await s.app.db.selectFrom('automation_runs').select(['outcome']).execute();
  const acted = runs.filter((r) => r.outcome === 'acted').length;
  const perFloor = floorMs / MESSAGES;
  const perRules = rulesMs / MESSAGES;
  figure('dialect', dialect);
  figure('messages', MESSAGES);
  figure('rules_acting_on_every_mail', ACTING);
  figure('rule_runs', runs.length);
  figure('rule_runs_acted', acted);
  figure('ingest_cpu_per_message', perFloor, 'ms');
  figure('ingest_cpu_per_message_20_rules', perRules, 'ms');
  figure('rule_evaluation_cpu_per_message', perRules - perFloor, 'ms');
  figure('ratio_of_totals', (perRules - perFloor) / perFloor);
  figure('ratio', median(roundRatios));
  await s.stop();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
