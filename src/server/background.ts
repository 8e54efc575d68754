// The background table: job kinds and long-running listeners that features add to the server.
import type { Ctx } from '../context.js';
import type { JobKind } from '../platform/jobs.js';
import { broadcastsBackground } from '../broadcasts/background.js';
import { conversationsBackground } from '../conversations/background.js';
import { mailBackground } from '../mail/background.js';
import { mailHandlers } from './mail-handlers.js';
import { mailerTenantsBackground } from '../mailer-tenants/background.js';
import { migrationBackground } from '../mailbox-migration/background.js';
import { webhooksBackground } from '../webhooks/background.js';
import { lifecycleBackground } from '../lifecycle/background.js';
import { presenceBackground } from '../backup/presence.js';
import { eventsBackground } from '../events/watch.js';

export interface RunningPart {
  stop(): Promise<void>;
  /** Extra fields for the "listening" log line (for example the SMTP port). */
  info?: Record<string, unknown>;
}

export interface BackgroundPart {
  name: string;
  jobs?(ctx: Ctx): JobKind[];
  /** Started after migrations, before the HTTP listener opens. */
  start?(ctx: Ctx): Promise<RunningPart | void>;
}

export const backgroundTable: BackgroundPart[] = [presenceBackground, conversationsBackground, mailBackground(mailHandlers), webhooksBackground, broadcastsBackground, mailerTenantsBackground, migrationBackground, lifecycleBackground, eventsBackground];
