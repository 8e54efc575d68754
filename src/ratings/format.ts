// What the API shows of an inbox's rating settings, and its schema.
import { z } from '@hono/zod-openapi';
import type { InboxRatingSettingsTable } from '../db/schema.js';

export function formatRatingSettings(row: Pick<InboxRatingSettingsTable, 'enabled' | 'updated_at'> | undefined) {
  return { enabled: row?.enabled === 1, updated_at: row?.updated_at ?? null };
}

export const RatingSettingsSchema = z
  .object({
    enabled: z.boolean().openapi({ description: 'a conversation closed by a person asks the customer once for a rating from 1 to 5' }),
    updated_at: z.string().nullable(),
  })
  .openapi('InboxRatingSettings');
