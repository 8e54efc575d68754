// When the out-of-office reply answers (./away.ts), apart from the services so that the event
// reaction (./reaction.ts) can use it without importing a service that records events.

import { isOpen, nextOpening } from '../business-hours/schedule.js';
import { inboxHours } from '../business-hours/service.js';
import type { Db } from '../db/schema.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import { findLiveInbox, type InboxRow } from '../inboxes/store.js';
import type { GreetingLocale } from './rules.js';
import { readAnswerSettings } from './settings.js';

export const AWAY_JOB = 'away_reply.send';

export interface AwayJobPayload {
  workspaceId: string;
  conversationId: string;
  messageId: string;
}

/**
 * When the inbox opens next if its away reply answers mail that arrived at `at` (switched on, closed
 * then, and opening again within a year: otherwise there is nothing true to say); else null.
 */
export async function awayReplyOpening(
  db: Db,
  workspaceId: string,
  inboxId: string,
  at: Date,
): Promise<{ inbox: InboxRow; timezone: string; opening: Date } | null> {
  // Whether it is on, cached while the reaction settings epoch holds (migration 0066).
  const on = await cachedReactionSetting(
    db,
    `away-reply-on:${inboxId}`,
    async () => (await readAnswerSettings(db, 'inbox_away_replies', inboxId))?.enabled === 1,
  );
  if (!on) return null;
  const inbox = await findLiveInbox(db, workspaceId, inboxId);
  if (!inbox) return null;
  const hours = await inboxHours(db, inbox);
  if (isOpen(hours, at)) return null;
  const opening = nextOpening(hours, at);
  return opening ? { inbox, timezone: hours.timezone, opening } : null;
}

/** "Monday 7 December at 09:00 GMT+3" in the customer's language, on the inbox's clock. */
export function formatOpening(opening: Date, timeZone: string, locale: GreetingLocale): string {
  return new Intl.DateTimeFormat(locale === 'tr' ? 'tr-TR' : 'en-GB', {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone,
    timeZoneName: 'short',
  }).format(opening);
}
