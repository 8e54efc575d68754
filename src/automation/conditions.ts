// What a rule's conditions read about a conversation (its facts) and how each condition is tested.
// The dry run and a real run use these same functions, so they cannot disagree on the same data.

import { isOpen } from '../business-hours/schedule.js';
import { inboxHours } from '../business-hours/service.js';
import { type ContactView, loadContactView } from '../contacts/store.js';
import type { ConversationRow, MessageRow } from '../conversations/format.js';
import { labelsOf, latestCustomerMessage } from '../conversations/store.js';
import { customFieldsOf, type FieldValue } from '../custom-fields/store.js';
import type { Db } from '../db/schema.js';
import { findInbox } from '../inboxes/store.js';
import { patternMatches } from './pattern.js';
import type { Condition } from './schema.js';

export interface Facts {
  conversation: ConversationRow;
  labels: string[];
  /** The message the rule looks at: the one that started the run, else the customer's newest. */
  message: MessageRow | undefined;
  senderEmail: string | null;
  attributes: Record<string, unknown>;
  /** When the rule looks (the message's time for message triggers, else now): business hours use it. */
  at: Date;
  /** Read once, when a business_hours condition asks. */
  insideHours?: boolean;
  /** The conversation's custom field values by key, read once when a condition or action asks. */
  customFields?: Record<string, FieldValue | null>;
}

export async function customFieldsOfFacts(db: Db, f: Facts): Promise<Record<string, FieldValue | null>> {
  f.customFields ??= (await customFieldsOf(db, f.conversation.workspace_id, 'conversation', [f.conversation.id])).get(f.conversation.id) ?? {};
  return f.customFields;
}

/** A custom field's value against a condition's: a multi-select holds it when the option is among them. */
function fieldHolds(held: FieldValue | null | undefined, wanted: string | number | boolean | undefined): boolean {
  if (held === null || held === undefined || wanted === undefined) return false;
  const same = (v: string | number | boolean) => lower(String(v)) === lower(String(wanted));
  return Array.isArray(held) ? held.some(same) : same(held);
}

export async function loadFacts(db: Db, conversation: ConversationRow, opts: { message?: MessageRow; at: Date }): Promise<Facts> {
  const [labels, message, contact] = await Promise.all([
    labelsOf(db, [conversation.id]),
    opts.message ?? latestCustomerMessage(db, conversation.id),
    loadContactView(db, conversation.workspace_id, conversation.contact_id),
  ]);
  return factsOf(conversation, labels.get(conversation.id) ?? [], message, contact, opts.at);
}

/** Facts from rows read already (a batch of runs reads them for all its conversations at once). */
export function factsOf(conversation: ConversationRow, labels: string[], message: MessageRow | undefined, contact: ContactView | undefined, at: Date): Facts {
  let attributes: Record<string, unknown> = {};
  try {
    attributes = JSON.parse(contact?.contact.attributes ?? '{}') ?? {};
  } catch {
    attributes = {};
  }
  return { conversation, labels, message, senderEmail: contact?.emails[0]?.toLowerCase() ?? null, attributes, at };
}

const lower = (s: string | null | undefined) => (s ?? '').toLowerCase();

function text(operator: 'contains' | 'not_contains' | 'matches', haystack: string, value: string): boolean {
  if (operator === 'matches') return patternMatches(value, haystack);
  const found = lower(haystack).includes(lower(value));
  return operator === 'contains' ? found : !found;
}

async function test(db: Db, c: Condition, f: Facts): Promise<boolean> {
  const cv = f.conversation;
  switch (c.field) {
    case 'inbox_id':
      return (cv.inbox_id === c.value) === (c.operator === 'is');
    case 'channel_kind':
      return (cv.source === c.value) === (c.operator === 'is');
    case 'subject':
      return text(c.operator, cv.subject ?? '', c.value);
    case 'body':
      return text(c.operator, f.message?.body ?? '', c.value);
    case 'sender_email': {
      const email = f.senderEmail;
      if (!email) return false;
      const v = lower(c.value).trim();
      return c.operator === 'is' ? email === v : c.operator === 'contains' ? email.includes(v) : email.endsWith(v);
    }
    case 'sender_domain': {
      const domain = f.senderEmail?.split('@')[1] ?? null;
      const v = lower(c.value).trim().replace(/^@/, '');
      return (domain === v) === (c.operator === 'is');
    }
    case 'contact_attribute': {
      const v = f.attributes[c.key];
      if (v === undefined || v === null) return false;
      if (c.operator === 'exists') return true;
      const shown = typeof v === 'string' ? v : JSON.stringify(v);
      return c.operator === 'is' ? lower(shown) === lower(c.value) : lower(shown).includes(lower(c.value));
    }
    case 'label': {
      const has = f.labels.some((l) => lower(l) === lower(c.value));
      return has === (c.operator === 'has');
    }
    case 'priority':
      return (cv.priority === c.value) === (c.operator === 'is');
    case 'status':
      return (cv.status === c.value) === (c.operator === 'is');
    case 'assignee_id':
      if (c.operator === 'unassigned') return cv.assignee_id === null;
      return (cv.assignee_id === c.value) === (c.operator === 'is');
    case 'team_id':
      if (c.operator === 'none') return (cv.team_id ?? null) === null;
      return ((cv.team_id ?? null) === c.value) === (c.operator === 'is');
    case 'business_hours': {
      if (f.insideHours === undefined) {
        const inbox = await findInbox(db, cv.inbox_id);
        f.insideHours = inbox ? isOpen(await inboxHours(db, inbox), f.at) : false;
      }
      return f.insideHours === (c.operator === 'inside');
    }
    case 'custom_field': {
      const held = (await customFieldsOfFacts(db, f))[c.key];
      const empty = held === null || held === undefined || (Array.isArray(held) && held.length === 0);
      if (c.operator === 'is_set' || c.operator === 'is_empty') return empty === (c.operator === 'is_empty');
      return fieldHolds(held, c.value) === (c.operator === 'is');
    }
  }
}

/** Whether the conditions hold: all (or any) of the items; no items hold for every conversation. */
export async function conditionsHold(db: Db, conditions: { match: 'all' | 'any'; items: readonly Condition[] }, facts: Facts): Promise<boolean> {
  if (conditions.items.length === 0) return true;
  for (const c of conditions.items) {
    const ok = await test(db, c, facts);
    if (conditions.match === 'any' && ok) return true;
    if (conditions.match === 'all' && !ok) return false;
  }
  return conditions.match === 'all';
}
