// Thread grouping of the plan over compact numeric ids: the keys must be exactly those of the
// connected components of messages and references, named by their smallest node, whatever the
// order the items are read in, and a plan grouped page by page (refs dropped) equals the plain one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeOf, type PlanItem, type PlanOptions, planItems, ThreadGrouper, threadKeyOf } from '../../src/mailbox-migration/copy/plan.js';

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function mailbox(seed: number, count: number): PlanItem[] {
  const rnd = random(seed);
  const items: PlanItem[] = [];
  for (let i = 0; i < count; i++) {
    const refs: string[] = [];
    const refCount = Math.floor(rnd() * 4);
    // References to earlier messages, to messages never seen (missing parents) and to later ones.
    for (let r = 0; r < refCount; r++) refs.push(`m${Math.floor(rnd() * count * 1.3)}@x.test`);
    items.push({
      source_key: `k${String(i).padStart(5, '0')}`,
      folder: rnd() < 0.8 ? 'INBOX' : 'Sent',
      uid: i + 1,
      // Some messages without a Message-ID, some sharing one (duplicates).
      rfc_id: rnd() < 0.05 ? null : `m${rnd() < 0.05 ? Math.floor(rnd() * count) : i}@x.test`,
      refs,
      sent_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(rnd() * 1e9)).toISOString(),
      size: 1000,
      from_address: rnd() < 0.3 ? 'team@us.test' : `c${Math.floor(rnd() * 50)}@customer.test`,
      recipients: JSON.stringify(['team@us.test', `c${i % 7}@customer.test`]),
      automatic: rnd() < 0.1,
      status: rnd() < 0.05 ? 'copied' : 'planned',
    });
  }
  return items;
}

/** The components by a plain graph search: every message joined with what it references. */
function expectedKeys(items: readonly PlanItem[]): string[] {
  const edges = new Map<string, string[]>();
  const link = (a: string, b: string) => {
    if (!edges.has(a)) edges.set(a, []);
    edges.get(a)!.push(b);
  };
  for (const item of items) {
    const node = nodeOf(item);
    link(node, node);
    for (const ref of item.refs) {
      link(node, ref);
      link(ref, node);
    }
  }
  const smallestOf = new Map<string, string>();
  for (const start of edges.keys()) {
    if (smallestOf.has(start)) continue;
    const seen = [start];
    const visited = new Set([start]);
    for (let i = 0; i < seen.length; i++)
      for (const next of edges.get(seen[i]) ?? [])
        if (!visited.has(next)) {
          visited.add(next);
          seen.push(next);
        }
    const smallest = seen.reduce((a, b) => (b < a ? b : a));
    for (const node of seen) smallestOf.set(node, smallest);
  }
  return items.map((item) => threadKeyOf(smallestOf.get(nodeOf(item))!));
}

const options: PlanOptions = {
  teamAddresses: new Set(['team@us.test']),
  maxMessageBytes: 50 * 1024 * 1024,
  dateFrom: null,
  dateTo: null,
  skipAutomatic: true,
  folderOrder: ['INBOX', 'Sent'],
};

describe('plan: thread grouping', () => {
  test('threads are the components of messages and references, named by the smallest node, in any order', () => {
    for (const seed of [1, 2, 3, 42]) {
      const items = mailbox(seed, 3000);
      const expected = expectedKeys(items);
      const plan = planItems(items, options);
      assert.deepEqual(
        plan.items.map((p) => p.thread_key),
        expected,
      );
      // The same mailbox read in another order gives every message the same thread.
      const reversed = [...items].reverse();
      const again = planItems(reversed, options);
      assert.deepEqual(
        again.items.map((p) => p.thread_key),
        [...expected].reverse(),
      );
    }
  });

  test('a chain of references longer than any page joins into one thread', () => {
    const grouper = new ThreadGrouper();
    const n = 20_000;
    // Each message references the next one, read from the end: the worst order for the sets.
    for (let i = n - 1; i >= 0; i--) grouper.add(`c${i}@x.test`, [`c${i + 1}@x.test`]);
    const set = grouper.setOf('c0@x.test');
    assert.equal(grouper.setOf(`c${n - 1}@x.test`), set);
    assert.equal(grouper.setOf(`c${n}@x.test`), set);
    assert.equal(grouper.smallestOf(set), 'c0@x.test');
  });

  test('grouping while reading pages (refs not kept) plans exactly like the whole list', () => {
    const items = mailbox(7, 5000);
    const whole = planItems(items, options);
    const grouper = new ThreadGrouper();
    const compact = items.map((item) => {
      grouper.add(nodeOf(item), item.refs);
      return { ...item, refs: [] };
    });
    const paged = planItems(compact, options, grouper);
    assert.deepEqual(paged, whole);
    assert.ok(whole.threads.some((t) => t.messages > 1));
  });
});
