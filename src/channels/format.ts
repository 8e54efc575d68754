// The response schema of a channel (the OpenAPI document's Channel); what a channel shows is
// formatChannel in ./service.ts.
import { z } from '@hono/zod-openapi';
import { ReaderSchema, ReadingSchema } from '../mailbox-reader/format.js';

export const ChannelSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['email', 'chat']),
    inbox_id: z.string(),
    name: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    address: z.string().nullable().optional(),
    display_name: z.string().nullable().optional(),
    from_address: z.string().nullable().optional(),
    forwarding_address: z.string().nullable().optional(),
    smtp: z
      .object({
        host: z.string().nullable(),
        port: z.number().nullable(),
        tls: z.string().nullable(),
        username: z.string().nullable(),
        password_set: z.boolean(),
      })
      .nullable()
      .optional(),
    public_key: z.string().nullable().optional(),
    origins: z.array(z.string()).optional(),
    allow_anonymous: z.boolean().optional(),
    ask_email_offline: z.boolean().optional(),
    greeting: z.string().nullable().optional(),
    reading: ReadingSchema.nullable().optional(),
    reader: ReaderSchema.nullable().optional(),
  })
  .openapi('Channel');
