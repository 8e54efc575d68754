// The schemas of reports and usage (the service builds the answers in this shape).
import { z } from '@hono/zod-openapi';

const Duration = z
  .object({
    count: z.number().int(),
    median_seconds: z.number().int().nullable(),
    p90_seconds: z.number().int().nullable().openapi({ description: 'nearest-rank 90th percentile' }),
  })
  .openapi('ReportDuration');

const Figures = {
  opened: z
    .number()
    .int()
    .nullable()
    .openapi({ description: 'conversations started (live, not imported); null with member_id (no member opens a conversation)' }),
  closed: z.number().int().openapi({ description: 'closes (by the member, with member_id)' }),
  replies: z.number().int().openapi({ description: 'team replies (notes, automatic mail and imported mail left out)' }),
  first_response: Duration.openapi({ description: 'from the conversation’s start to the first team reply, calendar time; counted on the reply’s day' }),
  resolution: Duration.openapi({ description: 'from the conversation’s start to its close, calendar time; counted on the close’s day' }),
  first_response_business: Duration.openapi({ description: 'the same first responses counted in the inbox’s business hours' }),
  resolution_business: Duration.openapi({ description: 'the same resolutions counted in the inbox’s business hours' }),
  ratings: z.object({
    count: z.number().int(),
    average: z.number().nullable(),
    distribution: z.object({ '1': z.number().int(), '2': z.number().int(), '3': z.number().int(), '4': z.number().int(), '5': z.number().int() }),
  }),
};

const SlaTargetFigures = z
  .object({
    met: z.number().int().openapi({ description: 'met in time' }),
    breached: z.number().int(),
    met_percent: z.number().nullable().openapi({ description: 'met ÷ (met + breached) × 100, one decimal; null when none ended' }),
  })
  .openapi('ReportSlaTarget');

export const ReportSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    inbox_id: z.string().nullable(),
    member_id: z.string().nullable(),
    totals: z.object(Figures),
    sla: z
      .object({
        first_response: SlaTargetFigures,
        next_response: SlaTargetFigures,
        resolution: SlaTargetFigures,
        breaches_by_inbox: z.array(z.object({ inbox_id: z.string(), breaches: z.number().int() })),
        breaches_by_member: z.array(
          z.object({ member_id: z.string().nullable().openapi({ description: 'the assignee at the breach; null: unassigned' }), breaches: z.number().int() }),
        ),
      })
      .openapi({ description: 'SLA targets that ended in the period (UTC days of the met or breach time); imported conversations never have one' }),
    days: z.array(z.object({ day: z.string().openapi({ description: 'UTC date' }), ...Figures })),
  })
  .openapi('Report');

export const UsageSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    storage_bytes: z.number().int().openapi({ description: 'attachments and kept original e-mails stored now' }),
    months: z.array(
      z.object({
        month: z.string().openapi({ description: 'YYYY-MM (UTC)' }),
        conversations: z.object({ billed: z.number().int(), imported: z.number().int().openapi({ description: 'counted in the month of the import' }) }),
        messages: z.object({ billed: z.number().int(), imported: z.number().int() }),
        storage_bytes_added: z.number().int(),
      }),
    ),
  })
  .openapi('Usage');
