import { autoAssign } from '../assignment/pick.js';
import type { Access } from '../auth/access.js';
import { canSeeInbox } from '../auth/access.js';
import { findChannel, firstChannelOfInbox } from '../channels/store.js';
import { formatContact } from '../contacts/format.js';
import { findContact, loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { customFieldsOf, missingRequiredFields } from '../custom-fields/store.js';
import { setCustomFieldValues } from '../custom-fields/values.js';
import type { ConversationPriority, ConversationStatus } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import type { EventCause } from '../events/reaction-types.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { findLiveInbox } from '../inboxes/store.js';
import { checkParticipants } from '../mail/reply-recipients.js';
import { isMemberOf } from '../members/store.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { scheduleWake } from '../snooze/schedule.js';
import { findTeam } from '../teams/store.js';
import { type ConversationRow, formatConversation, SNOOZE_UNTIL_REPLY } from './format.js';
import { participantsOf } from './participants.js';
import {
  type Author,
  authorFromAccess,
  checkLabels,
  getConversationFor,
  insertMessage,
  MAX_SUBJECT_LENGTH,
  PRIORITIES,
  type RecordOptions,
  STATUSES,
  type Tx,
} from './service.js';
import { labelsOf } from './store.js';

export interface ConversationPatch {
  status?: ConversationStatus;
  assigneeId?: string | null;
  /** A team of the workspace, or null to take it out of its team. */
  teamId?: string | null;
  priority?: ConversationPriority | null;
  labels?: string[];
  subject?: string | null;
  spam?: boolean;
  contactId?: string;
  inboxId?: string;
  /** E-mail conversations only; replaces the list (checked by checkParticipants). */
  participants?: { name?: string | null; address: string; role: 'to' | 'cc' }[];
  /** Snooze until a time, until the customer answers ('customer_reply'), or wake now (null). */
  snoozedUntil?: Date | typeof SNOOZE_UNTIL_REPLY | null;
  /** Custom field values by key (checked by type; null clears); keys not named stay. */
  customFields?: Record<string, unknown>;
}

/** The furthest a snooze may reach. */
export const MAX_SNOOZE_MS = 2 * 366 * 24 * 3600_000;

type Change = { from: unknown; to: unknown };

function describe(changes: Record<string, Change>): string {
  return Object.entries(changes)
    .map(([field, c]) => `${field}: ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)}`)
    .join('; ');
}

/**
 * Applies changes to one conversation inside the caller's transaction: validates them, writes an
 * 'event' message that records what changed, and records one conversation.updated event.
 * Returns the conversation as it is now and whether anything changed.
 */
export async function applyConversationChanges(
  tx: Tx,
  input: { conversation: ConversationRow; patch: ConversationPatch; author: Author; reason?: string; automation?: EventCause['automation'] } & RecordOptions,
): Promise<{ conversation: ConversationRow; labels: string[]; changed: boolean }> {
  const current = input.conversation;
  const patch = input.patch;
  const currentLabels = (await labelsOf(tx.db, [current.id])).get(current.id)!;
  const set: Partial<ConversationRow> = {};
  const changes: Record<string, Change> = {};
  const note = (field: string, from: unknown, to: unknown) => {
    changes[field] = { from, to };
  };

  if (patch.status !== undefined && patch.status !== current.status) {
    if (!STATUSES.includes(patch.status)) throw invalid('status must be open, pending or closed');
    set.status = patch.status;
    note('status', current.status, patch.status);
  }
  if (patch.assigneeId !== undefined && patch.assigneeId !== current.assignee_id) {
    if (patch.assigneeId !== null) {
      if (!(await isMemberOf(tx.db, current.workspace_id, patch.assigneeId))) throw invalid(`assignee ${patch.assigneeId} is not a member of this workspace`);
    }
    set.assignee_id = patch.assigneeId;
    note('assignee_id', current.assignee_id, patch.assigneeId);
  }
  if (patch.teamId !== undefined && patch.teamId !== (current.team_id ?? null)) {
    if (patch.teamId !== null && !(await findTeam(tx.db, current.workspace_id, patch.teamId)))
      throw invalid(`team ${patch.teamId} is not a team of this workspace`, { issues: [{ path: 'team_id', message: 'not a team of this workspace' }] });
    set.team_id = patch.teamId;
    note('team_id', current.team_id ?? null, patch.teamId);
  }
  if (patch.priority !== undefined && patch.priority !== current.priority) {
    if (patch.priority !== null && !PRIORITIES.includes(patch.priority)) throw invalid('priority must be low, medium, high, urgent or null');
    set.priority = patch.priority;
    note('priority', current.priority, patch.priority);
  }
  if (patch.subject !== undefined) {
    const subject = patch.subject === null ? null : patch.subject.trim().slice(0, MAX_SUBJECT_LENGTH) || null;
    if (subject !== current.subject) {
      set.subject = subject;
      note('subject', current.subject, subject);
    }
  }
  if (patch.spam !== undefined && (patch.spam ? 1 : 0) !== current.spam) {
    set.spam = patch.spam ? 1 : 0;
    note('spam', current.spam === 1, patch.spam);
  }
  if (patch.contactId !== undefined && patch.contactId !== current.contact_id) {
    const target = await findContact(tx.db, current.workspace_id, patch.contactId);
    if (!target) throw notFound(`contact ${patch.contactId}`);
    if (target.merged_into_id) throw invalid(`contact ${patch.contactId} was merged into ${target.merged_into_id}; use that one`);
    set.contact_id = patch.contactId;
    note('contact_id', current.contact_id, patch.contactId);
  }
  if (patch.inboxId !== undefined && patch.inboxId !== current.inbox_id) {
    const inbox = await findLiveInbox(tx.db, current.workspace_id, patch.inboxId);
    if (!inbox) throw notFound(`inbox ${patch.inboxId}`);
    set.inbox_id = patch.inboxId;
    note('inbox_id', current.inbox_id, patch.inboxId);
    // Replies go out through the new inbox's channel of the same kind (its oldest), if it has one.
    if (current.channel_id) {
      const former = await findChannel(tx.db, current.channel_id);
      const replacement = former ? await firstChannelOfInbox(tx.db, patch.inboxId, former.kind) : undefined;
      set.channel_id = replacement?.id ?? null;
    }
  }
  if (patch.participants !== undefined) {
    if (current.source !== 'email')
      throw invalid('participants: only e-mail conversations have participants', {
        issues: [{ path: 'participants', message: 'only e-mail conversations have participants' }],
      });
    const before = participantsOf(current) ?? [];
    const next = await checkParticipants(tx.db, current.workspace_id, patch.participants);
    if (JSON.stringify(next) !== JSON.stringify(before)) {
      set.participants = JSON.stringify(next);
      note('participants', before, next);
    }
  }
  let wakeAt: Date | null = null;
  if (patch.snoozedUntil !== undefined) {
    const shown = formatConversation(current, []).snoozed_until;
    if (patch.snoozedUntil === null) {
      if (current.snoozed_at) {
        set.snoozed_at = null;
        set.snoozed_until = null;
        note('snoozed_until', shown, null);
      }
    } else {
      const until = patch.snoozedUntil === SNOOZE_UNTIL_REPLY ? null : patch.snoozedUntil;
      const now = tx.clock.now().getTime();
      if (until && until.getTime() <= now)
        throw invalid('snoozed_until must be in the future', { issues: [{ path: 'snoozed_until', message: 'must be in the future' }] });
      if (until && until.getTime() > now + MAX_SNOOZE_MS)
        throw invalid('snoozed_until may be at most two years ahead', { issues: [{ path: 'snoozed_until', message: 'at most two years ahead' }] });
      const untilText = until ? iso(until) : null;
      if (!current.snoozed_at || untilText !== (current.snoozed_until ?? null)) {
        set.snoozed_at = iso(tx.clock.now());
        set.snoozed_until = untilText;
        note('snoozed_until', shown, untilText ?? SNOOZE_UNTIL_REPLY);
        wakeAt = until;
      }
    }
  }
  let labels = currentLabels;
  if (patch.labels !== undefined) {
    const next = checkLabels(patch.labels);
    if (next.join('\n') !== currentLabels.join('\n')) {
      await tx.db.deleteFrom('conversation_labels').where('conversation_id', '=', current.id).execute();
      if (next.length)
        await tx.db
          .insertInto('conversation_labels')
          .values(next.map((label) => ({ conversation_id: current.id, label })))
          .execute();
      note('labels', currentLabels, next);
      labels = next;
    }
  }

  if (patch.customFields !== undefined) {
    const written = await setCustomFieldValues(tx.db, {
      workspaceId: current.workspace_id,
      object: 'conversation',
      ownerId: current.id,
      values: patch.customFields,
    });
    for (const [key, c] of Object.entries(written)) note(`custom_fields.${key}`, c.from, c.to);
  }
  // Closing by a person or a key waits for the fields required before closing (with the values just written).
  if (set.status === 'closed' && (input.author.type === 'member' || input.author.type === 'api_key') && !input.quiet) {
    const missing = await missingRequiredFields(tx.db, current.workspace_id, current.id);
    if (missing.length)
      throw conflict(`fill in ${missing.map((f) => `${f.label} (${f.key})`).join(', ')} before closing this conversation`, 'custom_fields_required', {
        fields: missing.map((f) => f.key),
      });
  }

  // A reopened conversation nobody holds is auto-assigned in the same change (src/assignment/pick.ts).
  const reopened = set.status === 'open' && current.status !== 'open';
  if (reopened && patch.assigneeId === undefined && current.assignee_id === null && !input.quiet && !current.imported && !(set.spam ?? current.spam)) {
    const teamId = set.team_id !== undefined ? set.team_id : (current.team_id ?? null);
    const auto = await autoAssign(tx, { workspaceId: current.workspace_id, inboxId: set.inbox_id ?? current.inbox_id, teamId });
    if (auto?.teamId && auto.teamId !== teamId) {
      set.team_id = auto.teamId;
      note('team_id', teamId, auto.teamId);
    }
    if (auto?.assigneeId) {
      set.assignee_id = auto.assigneeId;
      note('assignee_id', null, auto.assigneeId);
    }
  }

  if (Object.keys(changes).length === 0) return { conversation: current, labels, changed: false };
  const now = tx.clock.now();
  set.updated_at = iso(now);
  await tx.db.updateTable('conversations').set(set).where('id', '=', current.id).execute();
  let conversation: ConversationRow = { ...current, ...set };
  if (wakeAt) await scheduleWake(tx.db, tx.clock, { workspaceId: current.workspace_id, conversationId: current.id }, wakeAt);
  const details: Record<string, unknown> = { changes };
  if (input.reason) details.reason = input.reason;
  ({ conversation } = await insertMessage(tx, conversation, {
    kind: 'event',
    direction: 'out',
    author: input.author,
    body: describe(changes),
    details,
    createdAt: now,
  }));
  if (!input.quiet) {
    const contact = await loadContactView(tx.db, conversation.workspace_id, conversation.contact_id);
    await recordEvent(tx, {
      workspaceId: conversation.workspace_id,
      inboxId: conversation.inbox_id,
      contactId: conversation.contact_id,
      type: 'conversation.updated',
      occurredAt: now,
      data: { conversation: formatConversation(conversation, labels), contact: contact ? formatContact(contact) : null },
      cause: { personId: input.author.type === 'member' ? input.author.personId : null, changes, reason: input.reason, automation: input.automation },
    });
  }
  return { conversation, labels, changed: true };
}

/** PATCH of one conversation by a caller. */
export async function updateConversation(ctx: Ctx, access: Access, id: string, patch: ConversationPatch) {
  if (patch.inboxId !== undefined && !canSeeInbox(access, patch.inboxId)) throw notFound(`inbox ${patch.inboxId}`);
  const result = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const conversation = await getConversationFor(tx, access, id);
    return applyConversationChanges(tx, { conversation, patch, author: authorFromAccess(access) });
  });
  if (result.changed) announceEvents(ctx);
  const values = await customFieldsOf(ctx.db, access.workspaceId, 'conversation', [result.conversation.id]);
  return { ...formatConversation(result.conversation, result.labels), custom_fields: values.get(result.conversation.id)! };
}

export const MAX_BULK = 100;

/** The same changes to several conversations in one transaction; one conversation.updated each. */
export async function bulkUpdateConversations(ctx: Ctx, access: Access, ids: readonly string[], patch: ConversationPatch) {
  const unique = [...new Set(ids)];
  if (unique.length === 0 || unique.length > MAX_BULK) throw invalid(`name 1 to ${MAX_BULK} conversations`);
  if (patch.inboxId !== undefined && !canSeeInbox(access, patch.inboxId)) throw notFound(`inbox ${patch.inboxId}`);
  if (patch.participants !== undefined)
    throw invalid('changes.participants: participants are changed one conversation at a time', {
      issues: [{ path: 'changes.participants', message: 'participants are changed one conversation at a time' }],
    });
  const results = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const out = [];
    for (const id of unique) {
      const conversation = await getConversationFor(tx, access, id);
      out.push(await applyConversationChanges(tx, { conversation, patch, author: authorFromAccess(access) }));
    }
    return out;
  });
  if (results.some((r) => r.changed)) announceEvents(ctx);
  const values = await customFieldsOf(
    ctx.db,
    access.workspaceId,
    'conversation',
    results.map((r) => r.conversation.id),
  );
  return results.map((r) => ({ ...formatConversation(r.conversation, r.labels), custom_fields: values.get(r.conversation.id)! }));
}
