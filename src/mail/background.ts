// The mail feature's part of `svc serve`: the SMTP ingress listener, the outbound send job, and
// forwarding addresses for channels that have none on the current domain.

import { retryRepliesJob } from '../mail-accounts/retry-job.js';
import type { BackgroundPart } from '../platform/background.js';
import { assignForwardingAddresses } from './forwarding.js';
import type { MailHandlers } from './handlers.js';
import { emailSendJob } from './outbound.js';
import { startSmtpListener } from './smtp-listener.js';

/** `handlers`: the ingress handler table (src/server/mail-handlers.ts). */
export const mailBackground = (handlers: MailHandlers): BackgroundPart => ({
  name: 'mail',
  jobs: (ctx) => [emailSendJob(ctx), retryRepliesJob(ctx)],
  async start(ctx) {
    await assignForwardingAddresses(ctx);
    const smtp = await startSmtpListener(ctx, handlers);
    if (!smtp) return;
    ctx.log.info('smtp ingress listening', { smtp: `${smtp.host}:${smtp.port}` });
    return { stop: smtp.stop, info: { smtp: `${smtp.host}:${smtp.port}` } };
  },
});
