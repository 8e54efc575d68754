// The reactions of the greeting, ratings and reports to recorded events. Each runs inside the
// transaction that records the event and writes its own durable work (a greeting message and its
// email.send job, a rating request and its job, report totals).
import type { Tx } from '../conversations/service.js';
import type { NewEvent } from '../events/service.js';
import { greetNewConversation } from '../greeting/service.js';
import { askForRating } from '../ratings/service.js';
import { countForReports } from './statistics.js';

export type EventReaction = (tx: Tx, event: Pick<NewEvent, 'type' | 'workspaceId' | 'data' | 'occurredAt'>) => Promise<void>;

export const customerCareReactions: readonly EventReaction[] = [countForReports, greetNewConversation, askForRating];
