// The background table: job kinds and long-running listeners that features add to the server.

import { analyticsBackground } from '../analytics/background.js';
import { ACCESS_REVOKED } from '../auth/revocation.js';
import { automationBackground } from '../automation/background.js';
import { broadcastsBackground } from '../broadcasts/background.js';
import { CHANNELS_DELETED } from '../channels/service.js';
import { contactsBackground } from '../contacts/background.js';
import { conversationsBackground } from '../conversations/background.js';
import { eventsBackground } from '../events/watch.js';
import { greetingBackground } from '../greeting/background.js';
import { lifecycleBackground } from '../lifecycle/background.js';
import { mailBackground } from '../mail/background.js';
import { migrationBackground } from '../mailbox-migration/background.js';
import { mailboxReaderBackground } from '../mailbox-reader/background.js';
import { mailerTenantsBackground } from '../mailer-tenants/background.js';
import { notificationsBackground } from '../notifications/background.js';
import { peopleBackground } from '../people/background.js';
import type { BackgroundPart } from '../platform/background.js';
import { presenceBackground } from '../platform/presence.js';
import { ratingsBackground } from '../ratings/background.js';
import { slaBackground } from '../sla/background.js';
import { snoozeBackground } from '../snooze/background.js';
import { webhooksBackground } from '../webhooks/background.js';
import { mailHandlers } from './mail-handlers.js';

export type { BackgroundPart, RunningPart } from '../platform/background.js';

export const backgroundTable: BackgroundPart[] = [
  presenceBackground,
  conversationsBackground,
  mailBackground(mailHandlers),
  webhooksBackground,
  broadcastsBackground,
  contactsBackground,
  mailerTenantsBackground,
  migrationBackground,
  mailboxReaderBackground,
  lifecycleBackground,
  eventsBackground([ACCESS_REVOKED, CHANNELS_DELETED]),
  notificationsBackground,
  greetingBackground,
  snoozeBackground,
  automationBackground,
  slaBackground,
  ratingsBackground,
  analyticsBackground,
  peopleBackground,
];
