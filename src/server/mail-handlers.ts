// The ingress handler table: features that take inbound mail before it is stored as a conversation
// register here (like the route table), in the order the ingress asks them. The handler types are
// in src/mail/handlers.ts; the SMTP listener, POST /v1/ingress/email and `svc ingest-email` get this table.
import { returnPathRecipients } from '../broadcasts/reports.js';
import type { MailHandlers } from '../mail/handlers.js';
import { migrationMailHandler } from '../mailbox-migration/switching/service.js';

export const mailHandlers: MailHandlers = {
  recipients: [returnPathRecipients],
  messages: [migrationMailHandler],
};
