// The public endpoint for Amazon SNS (POST /v1/mailer/notifications): subscription confirmations
// of accepted topics, and SES bounce and complaint notifications (the configuration set's event
// destination, or an identity's feedback notifications), mapped to the broadcast recipient.
import type { Ctx } from '../context.js';
import { tenantEventReceived } from '../mailer-tenants/service.js';
import { AppError } from '../platform/errors.js';
import { type MailRefs, recordFeedback } from './feedback.js';
import { parseSnsMessage, type SnsMessage, SnsVerifier } from './sns.js';

export type NotificationResult = 'confirmed' | 'unsubscribed' | 'bounce' | 'complaint' | 'tenant_event' | 'ignored' | 'unmatched';

interface SesMail {
  messageId?: string;
  headers?: { name?: string; value?: string }[];
  commonHeaders?: { messageId?: string };
}

/** Our token can be in the X-Svc-Broadcast header, the Message-ID or the return path. */
function refsOf(mail: SesMail | undefined): MailRefs {
  const headerValues = (mail?.headers ?? []).filter((h) => /^(x-svc-broadcast|message-id|return-path)$/i.test(h.name ?? '')).map((h) => h.value);
  return { texts: [...headerValues, mail?.commonHeaders?.messageId], providerMessageId: mail?.messageId ?? null };
}

export class MailerNotifications {
  readonly verifier: SnsVerifier;

  constructor(private readonly ctx: Ctx) {
    this.verifier = new SnsVerifier(ctx);
  }

  async handle(raw: string): Promise<NotificationResult> {
    const m = parseSnsMessage(raw);
    await this.verifier.verify(m);
    const { log } = this.ctx;
    if (m.Type === 'SubscriptionConfirmation') {
      try {
        await this.verifier.confirmSubscription(m);
      } catch (error) {
        if (error instanceof AppError) throw error;
        log.warn('sns subscription not confirmed', { topic_arn: m.TopicArn, error });
        throw new AppError(502, 'subscription_not_confirmed', 'the subscription could not be confirmed; Amazon SNS may send the confirmation again');
      }
      log.info('sns subscription confirmed', { topic_arn: m.TopicArn });
      return 'confirmed';
    }
    if (m.Type === 'UnsubscribeConfirmation') {
      log.warn('sns subscription ended', { topic_arn: m.TopicArn });
      return 'unsubscribed';
    }
    return this.notification(m);
  }

  private async notification(m: SnsMessage): Promise<NotificationResult> {
    let body: Record<string, any>;
    try {
      body = JSON.parse(m.Message);
    } catch {
      this.ctx.log.debug('sns notification ignored', { topic_arn: m.TopicArn, reason: 'not JSON' });
      return 'ignored';
    }
    const type = body?.notificationType ?? body?.eventType;
    if (type === 'Bounce') {
      if (body.bounce?.bounceType !== 'Permanent') {
        this.ctx.log.debug('transient bounce ignored', { bounce_type: body.bounce?.bounceType ?? null });
        return 'ignored';
      }
      return (await recordFeedback(this.ctx, 'bounce', refsOf(body.mail))) ? 'bounce' : 'unmatched';
    }
    if (type === 'Complaint') {
      if (body.complaint?.complaintFeedbackType === 'not-spam') return 'ignored';
      return (await recordFeedback(this.ctx, 'complaint', refsOf(body.mail))) ? 'complaint' : 'unmatched';
    }
    // An SES event forwarded by EventBridge (tenant sending status): its content only triggers a re-read.
    if (typeof body?.['detail-type'] === 'string' && body?.source === 'aws.ses') {
      await tenantEventReceived(this.ctx, { resources: body.resources, detail: body.detail });
      return 'tenant_event';
    }
    return 'ignored';
  }
}
