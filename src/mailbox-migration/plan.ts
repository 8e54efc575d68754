// The copy plan made from the scanned headers (the dry run): threads joined by References and
// In-Reply-To only (never by subject), duplicates by Message-ID, what is skipped and why, and the
// status each imported conversation gets. Pure functions over the items; the scan stores the result.
import { createHash } from 'node:crypto';
import type { ConversationStatus, MigrationItemStatus } from '../db/schema.js';
import { DAY } from '../platform/clock.js';

export type SkipReason = 'too_large' | 'outside_date_range' | 'automatic_only' | 'team_only' | 'gone';

export const SKIP_REASONS: Record<SkipReason | 'never_read' | 'duplicate', string> = {
  never_read: 'spam, trash and drafts are never read',
  duplicate: 'the same message (Message-ID) is in another folder or was copied already',
  too_large: 'larger than SVC_MIGRATION_MAX_MESSAGE_BYTES',
  outside_date_range: 'outside the chosen date range',
  automatic_only: 'a thread of only automatic mail (auto-replies, newsletters, delivery reports)',
  team_only: "a thread of only the team's mail",
  gone: 'no longer in the old mailbox when it was copied',
};

/** Special-use folders whose messages are never read. */
export const NEVER_READ_SPECIAL_USE: ReadonlySet<string> = new Set(['\\Junk', '\\Trash', '\\Drafts']);

export interface PlanItem {
  source_key: string;
  folder: string;
  uid: number | null;
  rfc_id: string | null;
  refs: string[];
  sent_at: string;
  size: number;
  from_address: string | null;
  recipients: string[];
  automatic: boolean;
  status: MigrationItemStatus;
}

export interface PlanOptions {
  teamAddresses: ReadonlySet<string>;
  maxMessageBytes: number;
  dateFrom: string | null;
  dateTo: string | null;
  skipAutomatic: boolean;
  /** Folders in the order a duplicate is kept from (first wins). */
  folderOrder: readonly string[];
}

export interface PlannedItem {
  source_key: string;
  status: MigrationItemStatus;
  skip_reason: string | null;
  thread_key: string;
  team: boolean;
}

export interface PlannedThread {
  thread_key: string;
  newest_at: string;
  messages: number;
  customer_address: string | null;
  status: 'planned' | 'skipped' | 'copied';
  skip_reason: SkipReason | null;
  /** Planned, skipped or duplicate items that belong here (for labels and counts). */
  sourceKeys: string[];
}

class UnionFind {
  private parent = new Map<string, string>();
  find(x: string): string {
    let root = x;
    for (;;) {
      const p = this.parent.get(root);
      if (p === undefined || p === root) break;
      root = p;
    }
    // Path compression keeps later finds short on long reference chains.
    let cur = x;
    while (cur !== root) {
      const next = this.parent.get(cur)!;
      this.parent.set(cur, root);
      cur = next;
    }
    if (!this.parent.has(root)) this.parent.set(root, root);
    return root;
  }
  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra < rb ? rb : ra, ra < rb ? ra : rb);
  }
}

/** The node a message is known by: its Message-ID, or its source identity when it has none. */
function nodeOf(item: Pick<PlanItem, 'rfc_id' | 'source_key'>): string {
  return item.rfc_id ? `id:${item.rfc_id}` : `src:${item.source_key}`;
}

export function threadKeyOf(root: string): string {
  return createHash('sha1').update(root).digest('hex').slice(0, 24);
}

function inRange(sentAt: string, from: string | null, to: string | null): boolean {
  if (from && sentAt < from) return false;
  // date_to is a whole day: everything before the next day's start.
  if (to && sentAt >= to) return false;
  return true;
}

/**
 * Plans every item of a migration. Items already copied keep their status; everything else gets a
 * status (planned, skipped with a reason, duplicate) and a thread.
 */
export function planItems(items: readonly PlanItem[], opts: PlanOptions): { items: PlannedItem[]; threads: PlannedThread[] } {
  const uf = new UnionFind();
  for (const item of items) {
    const node = nodeOf(item);
    uf.find(node);
    for (const ref of item.refs) uf.union(node, `id:${ref}`);
  }
  // The smallest node of each set names the thread, so the key does not depend on the order of unions.
  const smallest = new Map<string, string>();
  for (const item of items) {
    for (const node of [nodeOf(item), ...item.refs.map((r) => `id:${r}`)]) {
      const root = uf.find(node);
      const cur = smallest.get(root);
      if (cur === undefined || node < cur) smallest.set(root, node);
    }
  }
  const keyOf = (item: PlanItem) => threadKeyOf(smallest.get(uf.find(nodeOf(item)))!);

  // Duplicates: one item per Message-ID is copied (one already copied wins, else the first folder).
  const folderRank = new Map(opts.folderOrder.map((f, i) => [f, i]));
  const rank = (i: PlanItem) => (i.status === 'copied' ? -1 : (folderRank.get(i.folder) ?? opts.folderOrder.length));
  const primary = new Map<string, PlanItem>();
  for (const item of items) {
    if (!item.rfc_id) continue;
    const cur = primary.get(item.rfc_id);
    if (!cur || rank(item) < rank(cur) || (rank(item) === rank(cur) && (item.uid ?? 0) < (cur.uid ?? 0))) primary.set(item.rfc_id, item);
  }

  const planned: PlannedItem[] = [];
  const byThread = new Map<string, { items: PlanItem[]; all: string[] }>();
  for (const item of items) {
    const key = keyOf(item);
    const team = !!item.from_address && opts.teamAddresses.has(item.from_address);
    let entry = byThread.get(key);
    if (!entry) byThread.set(key, (entry = { items: [], all: [] }));
    entry.all.push(item.source_key);
    if (item.status === 'copied') {
      planned.push({ source_key: item.source_key, status: 'copied', skip_reason: null, thread_key: key, team });
      entry.items.push(item);
      continue;
    }
    if (item.rfc_id && primary.get(item.rfc_id) !== item) {
      planned.push({ source_key: item.source_key, status: 'duplicate', skip_reason: 'duplicate', thread_key: key, team });
      continue;
    }
    let reason: SkipReason | null = null;
    if (item.size > opts.maxMessageBytes) reason = 'too_large';
    else if (!inRange(item.sent_at, opts.dateFrom, opts.dateTo)) reason = 'outside_date_range';
    planned.push({ source_key: item.source_key, status: reason ? 'skipped' : 'planned', skip_reason: reason, thread_key: key, team });
    if (!reason) entry.items.push(item);
  }

  const plannedByKey = new Map(planned.map((p) => [p.source_key, p]));
  const threads: PlannedThread[] = [];
  for (const [key, entry] of byThread) {
    const members = entry.items;
    const copied = members.filter((i) => i.status === 'copied');
    const candidates = members.filter((i) => i.status !== 'copied');
    if (members.length === 0) {
      threads.push({ thread_key: key, newest_at: '', messages: 0, customer_address: null, status: 'skipped', skip_reason: null, sourceKeys: entry.all });
      continue;
    }
    const isTeam = (i: PlanItem) => plannedByKey.get(i.source_key)!.team;
    const sorted = [...members].sort((a, b) => (a.sent_at < b.sent_at ? -1 : a.sent_at > b.sent_at ? 1 : 0));
    let customer: string | null = null;
    for (const i of sorted) {
      if (!isTeam(i) && i.from_address) {
        customer = i.from_address;
        break;
      }
    }
    if (!customer) {
      for (const i of sorted) {
        const r = i.recipients.find((a) => !opts.teamAddresses.has(a));
        if (r) {
          customer = r;
          break;
        }
      }
    }
    let reason: SkipReason | null = null;
    if (copied.length === 0) {
      // Every message written by the team: not a conversation with a customer.
      if (members.every(isTeam)) reason = 'team_only';
      else if (opts.skipAutomatic && members.every((i) => i.automatic)) reason = 'automatic_only';
    }
    const newest = sorted[sorted.length - 1].sent_at;
    if (reason) {
      for (const i of candidates) {
        const p = plannedByKey.get(i.source_key)!;
        p.status = 'skipped';
        p.skip_reason = reason;
      }
    }
    threads.push({
      thread_key: key,
      newest_at: newest,
      messages: members.length,
      customer_address: customer,
      status: reason ? 'skipped' : candidates.length === 0 ? 'copied' : 'planned',
      skip_reason: reason,
      sourceKeys: entry.all,
    });
  }
  return { items: planned, threads };
}

/** The spec's rule for an imported conversation's status. */
export function importedStatus(input: { lastMessageAt: Date; teamWroteLast: boolean; closeAfterDays: number; now: Date }): ConversationStatus {
  if (input.now.getTime() - input.lastMessageAt.getTime() > input.closeAfterDays * DAY) return 'closed';
  return input.teamWroteLast ? 'pending' : 'open';
}

/** Label of a folder: the user's mapping, else none for the inbox and sent mail, else the folder path. */
export function labelOfFolder(path: string, specialUse: string | null, delimiter: string | null, mapping: Record<string, string | null>): string | null {
  if (Object.prototype.hasOwnProperty.call(mapping, path)) {
    const mapped = mapping[path];
    return mapped === null ? null : mapped.trim() || null;
  }
  if (path.toUpperCase() === 'INBOX' || specialUse === '\\Sent' || specialUse === '\\Inbox' || specialUse === '\\All' || specialUse === '\\Archive') return null;
  const label = (delimiter ? path.split(delimiter).join('/') : path).replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  return label ? label.slice(0, 100) : null;
}

/** Rough duration of the copy: about 3 Mbit/s and 20 ms per message, as typical for IMAP providers. */
export function estimateSeconds(messages: number, bytes: number): number {
  return Math.ceil(bytes / 375_000 + messages * 0.02);
}
