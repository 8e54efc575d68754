// The plan of a large scan (finishScan) is made in slices between which the event loop turns: on
// SQLite every query runs on the event loop, and before, a plan of 60,000 messages kept the server
// from answering anything for 7–10 s. Written in slices outside one transaction, a plan stopped
// half-way (kill -9: here a statement that fails, after which nothing of that run happens) leaves the
// migration scanning, and the next run writes the whole plan, the same as planItems makes it, with
// the conversations of threads copied before.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type KyselyPlugin, type OperationNode, type RootOperationNode, sql } from 'kysely';
import type { Ctx } from '../../src/context.js';
import type { MailboxMigrationItemsTable } from '../../src/db/schema.js';
import { finishScan } from '../../src/mailbox-migration/copy/finish-scan.js';
import { planItems, threadKeyOf } from '../../src/mailbox-migration/copy/plan.js';
import { type ChosenFolder, insertItems } from '../../src/mailbox-migration/copy/scan.js';
import { teamAddressesOf } from '../../src/mailbox-migration/copy/team.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { connectedImapMigration, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Threads of three: a customer's question, the team's answer, the customer's reply. */
const MESSAGES = 15_000;

function scannedItem(migrationId: string, i: number): MailboxMigrationItemsTable {
  const thread = Math.floor(i / 3);
  const pos = i % 3;
  const team = pos === 1;
  const customer = `c${thread % 2000}@customer.test`;
  return {
    migration_id: migrationId,
    source_key: `imap:1:${i + 1}:INBOX`,
    folder: 'INBOX',
    uid: i + 1,
    rfc_id: `t${thread}-${pos}@${team ? 'acme' : 'customer'}.test`,
    refs: pos === 0 ? null : JSON.stringify([`t${thread}-0@customer.test`, ...(pos === 2 ? [`t${thread}-1@acme.test`] : [])]),
    thread_key: null,
    sent_at: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString(),
    // Now and then one over the size limit.
    size: i % 1001 === 500 ? 200 * 1024 * 1024 : 4000 + (i % 1000),
    from_address: team ? SUPPORT : customer,
    from_name: team ? 'Support' : `Customer ${thread % 2000}`,
    recipients: JSON.stringify([team ? customer : SUPPORT]),
    subject: `Question ${thread}`,
    flags: null,
    gmail_labels: null,
    // Every 7th thread only automatic mail.
    automatic: thread % 7 === 0 ? 1 : 0,
    team: 0,
    status: 'planned',
    skip_reason: null,
    error: null,
    attempts: 0,
    message_id: null,
    conversation_id: null,
    copied_at: null,
  };
}

/** Makes the `nth` statement that `matches` fail, as if the process had died just before it. */
function failingAt(nth: number, matches: (node: RootOperationNode) => boolean): KyselyPlugin {
  let seen = 0;
  return {
    transformQuery(args) {
      if (matches(args.node) && ++seen === nth) throw new Error('killed here');
      return args.node;
    },
    async transformResult(args) {
      return args.result;
    },
  };
}

const updatesItems = (node: OperationNode) =>
  node.kind === 'RawNode' && (node as unknown as { sqlFragments: string[] }).sqlFragments.join('').includes('update mailbox_migration_items');
const insertsThreads = (node: OperationNode) =>
  node.kind === 'InsertQueryNode' &&
  (node as unknown as { into: { table: { identifier: { name: string } } } }).into.table.identifier.name === 'mailbox_migration_threads';

describe('the plan of a large scan', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  const clock = new ManualClock(new Date());
  const folders = { chosen: [{ path: 'INBOX', delimiter: '/', specialUse: null, noSelect: false, neverRead: false } as unknown as ChosenFolder], missing: [] };
  const migration = () => s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    s = await startTestServer({ clock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1' } });
    // The scan is driven by hand below: no worker may run it meanwhile.
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed, { address: SUPPORT });
    id = await connectedImapMigration(s, seed.apiKey, seed.inboxId, d);
    assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
    // What a scan of the whole INBOX stores (the mailbox itself stays empty: nothing reads it here).
    for (let i = 0; i < MESSAGES; i += 1000) {
      const rows: MailboxMigrationItemsTable[] = [];
      for (let j = i; j < Math.min(MESSAGES, i + 1000); j++) rows.push(scannedItem(id, j));
      await insertItems(s.app, rows);
    }
  });
  after(async () => {
    await s?.stop();
    await d?.stop();
  });

  /** The plan planItems makes of the stored items, and what finishScan stored. */
  async function expectedAndStored() {
    const m = await migration();
    const rows = await s.app.db.selectFrom('mailbox_migration_items').selectAll().where('migration_id', '=', id).orderBy('source_key').execute();
    const team = await teamAddressesOf(s.app, m);
    const plan = planItems(
      rows.map((r) => ({
        ...r,
        uid: r.uid === null ? null : Number(r.uid),
        size: Number(r.size),
        automatic: r.automatic === 1,
        refs: r.refs ? (JSON.parse(r.refs) as string[]) : [],
      })),
      {
        teamAddresses: team.addresses,
        maxMessageBytes: s.app.config.migration.maxMessageBytes,
        dateFrom: null,
        dateTo: null,
        skipAutomatic: m.skip_automatic === 1,
        folderOrder: ['INBOX'],
      },
    );
    const threads = await s.app.db.selectFrom('mailbox_migration_threads').selectAll().where('migration_id', '=', id).orderBy('thread_key').execute();
    return { rows, plan, threads };
  }

  function assertStoredAsPlanned({ rows, plan, threads }: Awaited<ReturnType<typeof expectedAndStored>>) {
    assert.deepEqual(
      rows.map((r) => [r.source_key, r.status, r.skip_reason, r.thread_key, r.team]),
      plan.items.map((p) => [p.source_key, p.status, p.skip_reason, p.thread_key, p.team ? 1 : 0]),
    );
    assert.deepEqual(
      threads.map((t) => [t.thread_key, t.messages, t.status, t.skip_reason, t.newest_at, t.customer_address]),
      [...plan.threads]
        .sort((a, b) => (a.thread_key < b.thread_key ? -1 : 1))
        .map((t) => [t.thread_key, t.messages, t.status, t.skip_reason, t.newest_at, t.customer_address]),
    );
  }

  test('the server answers a request while the plan is made', async () => {
    let planned = false;
    const planning = finishScan(s.app, await migration(), folders).then((saved) => {
      planned = true;
      return saved;
    });
    const answer = await s.request('GET', `/v1/migrations/${id}`, { token: seed.apiKey });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.state, 'scanning');
    assert.equal(planned, false, 'answered before the plan was done');
    assert.equal((await planning)?.state, 'ready');

    const stored = await expectedAndStored();
    assertStoredAsPlanned(stored);
    assert.ok(stored.plan.items.some((p) => p.status === 'skipped') && stored.plan.items.some((p) => p.status === 'planned'));
    const summary = JSON.parse((await migration()).summary ?? 'null');
    assert.equal(summary.total, MESSAGES);
    assert.equal(summary.conversations, stored.threads.filter((t) => t.status === 'planned').length);
    assert.equal(stored.threads.find((t) => t.thread_key === threadKeyOf('t1-0@customer.test'))?.subject, 'Question 1');
  });

  test('a plan stopped half-way leaves the migration scanning; the next run writes all of it and keeps conversations', async () => {
    // A thread that was copied, then a scan again, which finds a message joining it with the next thread.
    const copiedKey = threadKeyOf('t1-0@customer.test');
    const joinedKey = threadKeyOf('t2-0@customer.test');
    await s.app.db
      .updateTable('mailbox_migration_threads')
      .set({ conversation_id: 'cv_copied_before' })
      .where('migration_id', '=', id)
      .where('thread_key', '=', copiedKey)
      .execute();
    assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
    const joining = scannedItem(id, MESSAGES);
    await insertItems(s.app, [{ ...joining, rfc_id: 'x-joins-1-and-2@customer.test', refs: JSON.stringify(['t1-2@customer.test', 't2-2@customer.test']) }]);
    await sql`update mailbox_migration_items set thread_key = null where migration_id = ${id}`.execute(s.app.db);

    const stoppedIn = async (plugin: KyselyPlugin) => {
      const ctx: Ctx = { ...s.app, db: s.app.db.withPlugin(plugin) };
      await assert.rejects(finishScan(ctx, await migration(), folders), /killed here/);
      assert.equal((await migration()).state, 'scanning');
    };
    // Stopped while the items are written: some have their thread, the rest not yet.
    await stoppedIn(failingAt(5, updatesItems));
    const written = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select([(eb) => eb.fn.count<number>('thread_key').as('threaded'), (eb) => eb.fn.countAll<number>().as('all')])
      .where('migration_id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(Number(written.threaded) > 0 && Number(written.threaded) < Number(written.all), JSON.stringify(written));
    // Stopped again while the threads are written.
    await stoppedIn(failingAt(3, insertsThreads));

    const saved = await finishScan(s.app, await migration(), folders);
    assert.equal(saved?.state, 'ready');
    const stored = await expectedAndStored();
    assertStoredAsPlanned(stored);
    assert.equal(stored.threads.find((t) => t.thread_key === copiedKey)?.conversation_id, 'cv_copied_before');
    assert.equal(stored.threads.find((t) => t.thread_key === copiedKey)?.messages, 7);
    assert.equal(
      stored.threads.find((t) => t.thread_key === joinedKey),
      undefined,
      'the thread joined into another is no longer planned',
    );
    assert.equal(JSON.parse(saved?.summary ?? 'null')?.total, MESSAGES + 1);
  });
});
