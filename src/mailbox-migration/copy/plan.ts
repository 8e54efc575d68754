// The copy plan made from the scanned headers (the dry run): threads joined by References and
// In-Reply-To only (never by subject), duplicates by Message-ID, what is skipped and why, and the
// status each imported conversation gets. Pure functions over the items (`planItemsInSlices` lets the
// event loop turn while it plans); the scan stores the result.
import { createHash } from 'node:crypto';
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import type { ConversationStatus, MigrationItemStatus } from '../../db/schema.js';
import { DAY } from '../../platform/clock.js';

export type SkipReason = 'draft' | 'too_large' | 'outside_date_range' | 'automatic_only' | 'team_only' | 'gone';

export const SKIP_REASONS: Record<SkipReason | 'never_read' | 'duplicate', string> = {
  never_read: 'spam, trash and drafts are never read',
  duplicate: 'the same message (Message-ID) is in another folder or was copied already',
  draft: 'Gmail drafts (label \\Draft, read in All Mail) are never sent mail and are not copied',
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
  refs: readonly string[];
  sent_at: string;
  size: number;
  from_address: string | null;
  /** JSON array of To and Cc addresses (read only for threads the team began). */
  recipients: string | null;
  automatic: boolean;
  status: MigrationItemStatus;
  /** JSON array of Gmail labels (X-GM-LABELS), or null. */
  gmail_labels?: string | null;
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
  /** Index (in the input) of the thread's first message, and of the customer's first message. */
  first: number;
  customer: number | null;
}

/**
 * Threads by union-find over compact numeric ids: each Message-ID (or reference) is interned once
 * and the sets live in typed arrays, so a large mailbox's references need not be held per item.
 * Each set remembers its smallest node, which names the thread whatever the order of unions.
 */
export class ThreadGrouper {
  private readonly ids = new Map<string, number>();
  private readonly names: string[] = [];
  private parent = new Int32Array(1024);
  /** Per root: the id of the set's smallest node. */
  private smallest = new Int32Array(1024);

  private idOf(node: string): number {
    let id = this.ids.get(node);
    if (id !== undefined) return id;
    id = this.names.length;
    if (id === this.parent.length) {
      const parent = new Int32Array(id * 2);
      parent.set(this.parent);
      this.parent = parent;
      const smallest = new Int32Array(id * 2);
      smallest.set(this.smallest);
      this.smallest = smallest;
    }
    this.ids.set(node, id);
    this.names.push(node);
    this.parent[id] = id;
    this.smallest[id] = id;
    return id;
  }

  private root(id: number): number {
    let root = id;
    while (this.parent[root] !== root) root = this.parent[root];
    // Path compression keeps later finds short on long reference chains.
    while (id !== root) {
      const next = this.parent[id];
      this.parent[id] = root;
      id = next;
    }
    return root;
  }

  /** Adds a message's node and joins it with the messages it references; returns the node's id. */
  add(node: string, refs: Iterable<string>): number {
    const id = this.idOf(node);
    for (const ref of refs) {
      const a = this.root(id);
      const b = this.root(this.idOf(ref));
      if (a === b) continue;
      const sa = this.smallest[a];
      const sb = this.smallest[b];
      this.parent[b] = a;
      this.smallest[a] = this.names[sb] < this.names[sa] ? sb : sa;
    }
    return id;
  }

  /** The node of an id `add` returned: the one string kept for it (callers share it instead of holding their own copy). */
  nameOf(id: number): string {
    return this.names[id];
  }

  /** The set a known node belongs to, as a number stable until the next `add`. */
  setOf(node: string): number {
    const id = this.ids.get(node);
    if (id === undefined) throw new Error('node was never added');
    return this.root(id);
  }

  /** The smallest node of a set (see `setOf`). */
  smallestOf(set: number): string {
    return this.names[this.smallest[set]];
  }
}

/** The node a message is known by: its Message-ID, or (marked apart) its source identity when it has none. */
export function nodeOf(item: Pick<PlanItem, 'rfc_id' | 'source_key'>): string {
  return item.rfc_id ?? `\u0000${item.source_key}`;
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

export interface Plan {
  items: PlannedItem[];
  threads: PlannedThread[];
}

/** Items (or threads) planned between two turns of the event loop in `planItemsInSlices`. */
const PLAN_SLICE = 2000;

/**
 * Plans every item of a migration. Items already copied keep their status; everything else gets a
 * status (planned, skipped with a reason, duplicate) and a thread.
 */
export function planItems(items: readonly PlanItem[], opts: PlanOptions, grouper?: ThreadGrouper): Plan {
  const steps = planSteps(items, opts, grouper);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The same plan as `planItems`, letting the event loop turn after every slice of work: planning a
 * large mailbox takes seconds of CPU, in which a server would otherwise answer nothing.
 */
export async function planItemsInSlices(items: readonly PlanItem[], opts: PlanOptions, grouper?: ThreadGrouper): Promise<Plan> {
  const steps = planSteps(items, opts, grouper);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await yieldToOthers();
  }
}

/** The plan, pausing (yield) after about every PLAN_SLICE items or threads. */
function* planSteps(items: readonly PlanItem[], opts: PlanOptions, grouper?: ThreadGrouper): Generator<void, Plan> {
  let work = 0;
  const slice = () => {
    work++;
    return work % PLAN_SLICE === 0;
  };
  // A caller that reads items in pages groups them as it reads (and may drop their refs).
  let threads = grouper;
  if (!threads) {
    threads = new ThreadGrouper();
    for (const item of items) {
      threads.add(nodeOf(item), item.refs);
      if (slice()) yield;
    }
  }
  const grouped = threads;
  // One key per thread, hashed once (not once per message: the plan of a large mailbox stays small).
  const keyOfSet = new Map<number, string>();
  const keyOf = (item: PlanItem) => {
    const set = grouped.setOf(nodeOf(item));
    let key = keyOfSet.get(set);
    if (key === undefined) keyOfSet.set(set, (key = threadKeyOf(grouped.smallestOf(set))));
    return key;
  };

  // Duplicates: one item per Message-ID is copied (one already copied wins, else the first folder).
  const folderRank = new Map(opts.folderOrder.map((f, i) => [f, i]));
  const rank = (i: PlanItem) => (i.status === 'copied' ? -1 : (folderRank.get(i.folder) ?? opts.folderOrder.length));
  const primary = new Map<string, PlanItem>();
  for (const item of items) {
    if (slice()) yield;
    if (!item.rfc_id || (item.status !== 'copied' && isGmailDraft(item))) continue;
    const cur = primary.get(item.rfc_id);
    if (!cur || rank(item) < rank(cur) || (rank(item) === rank(cur) && (item.uid ?? 0) < (cur.uid ?? 0))) primary.set(item.rfc_id, item);
  }

  const planned: PlannedItem[] = [];
  const byThread = new Map<string, number[]>();
  for (let index = 0; index < items.length; index++) {
    if (slice()) yield;
    const item = items[index];
    const key = keyOf(item);
    const team = !!item.from_address && opts.teamAddresses.has(item.from_address);
    let members = byThread.get(key);
    if (!members) byThread.set(key, (members = []));
    if (item.status === 'copied') {
      planned.push({ source_key: item.source_key, status: 'copied', skip_reason: null, thread_key: key, team });
      members.push(index);
      continue;
    }
    if (isGmailDraft(item)) {
      planned.push({ source_key: item.source_key, status: 'skipped', skip_reason: 'draft', thread_key: key, team });
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
    if (!reason) members.push(index);
  }

  const plannedThreads: PlannedThread[] = [];
  for (const [key, members] of byThread) {
    if (slice()) yield;
    if (members.length === 0) continue;
    const sorted = [...members].sort((a, b) => (items[a].sent_at < items[b].sent_at ? -1 : items[a].sent_at > items[b].sent_at ? 1 : 0));
    const isTeam = (i: number) => planned[i].team;
    let customer: string | null = null;
    let customerIndex: number | null = null;
    for (const i of sorted) {
      if (!isTeam(i) && items[i].from_address) {
        customer = items[i].from_address;
        customerIndex = i;
        break;
      }
    }
    if (!customer) {
      for (const i of sorted) {
        const recipients = items[i].recipients ? (JSON.parse(items[i].recipients!) as string[]) : [];
        const r = recipients.find((a) => !opts.teamAddresses.has(a));
        if (r) {
          customer = r;
          break;
        }
      }
    }
    const copied = members.some((i) => items[i].status === 'copied');
    const candidates = members.filter((i) => items[i].status !== 'copied');
    let reason: SkipReason | null = null;
    if (!copied) {
      // Every message written by the team: not a conversation with a customer.
      if (members.every(isTeam)) reason = 'team_only';
      else if (opts.skipAutomatic && members.every((i) => items[i].automatic)) reason = 'automatic_only';
    }
    if (reason) {
      for (const i of candidates) {
        planned[i].status = 'skipped';
        planned[i].skip_reason = reason;
      }
    }
    plannedThreads.push({
      thread_key: key,
      newest_at: items[sorted[sorted.length - 1]].sent_at,
      messages: members.length,
      customer_address: customer,
      status: reason ? 'skipped' : candidates.length === 0 ? 'copied' : 'planned',
      skip_reason: reason,
      first: sorted[0],
      customer: customerIndex,
    });
  }
  return { items: planned, threads: plannedThreads };
}

/** The spec's rule for an imported conversation's status. */
export function importedStatus(input: { lastMessageAt: Date; teamWroteLast: boolean; closeAfterDays: number; now: Date }): ConversationStatus {
  if (input.now.getTime() - input.lastMessageAt.getTime() > input.closeAfterDays * DAY) return 'closed';
  return input.teamWroteLast ? 'pending' : 'open';
}

/** Label of a folder: the user's mapping, else none for the inbox and sent mail, else the folder path. */
export function labelOfFolder(path: string, specialUse: string | null, delimiter: string | null, mapping: Record<string, string | null>): string | null {
  if (Object.hasOwn(mapping, path)) {
    const mapped = mapping[path];
    return mapped === null ? null : mapped.trim() || null;
  }
  if (path.toUpperCase() === 'INBOX' || specialUse === '\\Sent' || specialUse === '\\Inbox' || specialUse === '\\All' || specialUse === '\\Archive')
    return null;
  const label = (delimiter ? path.split(delimiter).join('/') : path).replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  return label ? label.slice(0, 100) : null;
}

/**
 * Gmail's system labels (X-GM-LABELS) that are not labels here: where a message is (inbox, sent),
 * Gmail's own marks, and what is never read (drafts, spam, trash).
 */
const GMAIL_SYSTEM_LABELS = new Set([
  '\\INBOX',
  '\\SENT',
  '\\IMPORTANT',
  '\\STARRED',
  '\\DRAFT',
  '\\DRAFTS',
  '\\SPAM',
  '\\TRASH',
  '\\ALL',
  '\\CHAT',
  '\\MUTED',
]);

/**
 * The labels a message's Gmail labels give, mapped like folders: a label is named like the folder
 * Gmail shows for it ("Customers/VIP"), so `folder_labels` maps it by that name (null: no label);
 * system labels give none unless mapped.
 */
export function labelsOfGmailLabels(gmailLabels: readonly string[], mapping: Record<string, string | null>): string[] {
  const out = new Set<string>();
  for (const raw of gmailLabels) {
    const name = raw.trim();
    if (!name) continue;
    if (GMAIL_SYSTEM_LABELS.has(name.toUpperCase()) && !Object.hasOwn(mapping, name)) continue;
    const label = labelOfFolder(name, null, '/', mapping);
    if (label) out.add(label);
  }
  return [...out];
}

/**
 * A Gmail draft: All Mail holds drafts too (the Drafts folder is never read), known by the system
 * label \\Draft; one is never sent mail, so it is not copied whatever other labels it has.
 */
export function isGmailDraft(item: { gmail_labels?: string | null }): boolean {
  if (!item.gmail_labels || !/draft/i.test(item.gmail_labels)) return false;
  return (JSON.parse(item.gmail_labels) as string[]).some((l) => /^\\drafts?$/i.test(l.trim()));
}

/** A stored item's labels: its folder's, and its Gmail labels' (read with X-GM-LABELS). */
export function labelsOfItem(
  item: { folder: string; gmail_labels: string | null },
  labelOf: ReadonlyMap<string, string | null>,
  mapping: Record<string, string | null>,
): string[] {
  const folderLabel = labelOf.get(item.folder);
  const gmail = item.gmail_labels ? labelsOfGmailLabels(JSON.parse(item.gmail_labels) as string[], mapping) : [];
  return folderLabel ? [folderLabel, ...gmail] : gmail;
}

/** Rough duration of the copy: about 3 Mbit/s and 20 ms per message, as typical for IMAP providers. */
export function estimateSeconds(messages: number, bytes: number): number {
  return Math.ceil(bytes / 375_000 + messages * 0.02);
}
