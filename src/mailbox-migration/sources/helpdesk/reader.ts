// What the help-desk sources have in common: read a page of tickets from a stored cursor (as
// entries), test the credentials, count tickets, fetch an attachment. Zendesk and Help Scout
// implement it; source.ts turns the entries into the MailSource the scan and the copy read.
import type { Ctx } from '../../../context.js';
import type { HelpDeskAttachment, HelpDeskEntry } from './entry.js';

export interface HelpDeskPage {
  entries: HelpDeskEntry[];
  /** Where the next read starts (stored with the page's entries). */
  cursor: string | null;
  /** The export reached its end (the next read, while syncing, finds only changes after it). */
  done: boolean;
  /** Agents' addresses seen on the page (their entries are the team's). */
  agents: string[];
  /** Tickets left out, by reason (deleted, spam). */
  skipped: Record<string, number>;
}

export interface HelpDeskTest {
  signedInAs: string;
  tickets: number | null;
  host: string;
  /** HTTPS (always, unless a test setting points the source at a loopback fake). */
  secure: boolean;
}

export interface HelpDeskReader {
  readonly provider: 'zendesk' | 'help_scout';
  readonly requests: number;
  test(): Promise<HelpDeskTest>;
  ticketCount(): Promise<number | null>;
  page(cursor: string | null): Promise<HelpDeskPage>;
  attachment(a: HelpDeskAttachment): Promise<Buffer>;
}

export interface ReaderContext {
  ctx: Pick<Ctx, 'lookup' | 'config'>;
  sleep?: (ms: number) => Promise<void>;
}
