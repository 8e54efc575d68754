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
    smtp_auth: z.enum(['password', 'google', 'microsoft']).optional(),
    signed_in: z
      .object({
        provider: z.enum(['google', 'microsoft']),
        account: z.string(),
        state: z.enum(['ok', 'revoked']),
        error: z.string().nullable().openapi({ description: 'the provider’s words when it refused the sign-in' }),
        revoked_at: z.string().nullable(),
        connected_at: z.string(),
      })
      .nullable()
      .optional()
      .openapi({ description: 'the channel’s Google or Microsoft sign-in (never a token)' }),
    sign_in_required: z.boolean().optional().openapi({ description: 'smtp_auth is google or microsoft and there is no usable sign-in: sign in again' }),
    sign_in: z
      .object({ provider: z.enum(['google', 'microsoft']), url: z.string(), expires_at: z.string() })
      .optional()
      .openapi({ description: 'on create and PATCH only: the provider’s sign-in page to open (single use, 15 minutes)' }),
    public_key: z.string().nullable().optional(),
    origins: z.array(z.string()).optional(),
    allow_anonymous: z.boolean().optional(),
    ask_email_offline: z.boolean().optional(),
    greeting: z.string().nullable().optional(),
    reading: ReadingSchema.nullable().optional(),
    reader: ReaderSchema.nullable().optional(),
  })
  .openapi('Channel');
