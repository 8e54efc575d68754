// The schemas of a channel's mailbox reading: what PATCH/POST /v1/channels take (`reading`) and
// what a channel shows (`reading` without the password, `reader` with its state).
import { z } from '@hono/zod-openapi';

export const ReadingInputSchema = z
  .discriminatedUnion('kind', [
    z
      .object({
        kind: z.literal('imap'),
        host: z.string().min(1).max(253),
        port: z.number().int().min(1).max(65535).optional(),
        tls: z.enum(['tls', 'starttls', 'none']).optional(),
        username: z.string().min(1).max(500),
        password: z.string().max(2000).optional().openapi({ description: 'sealed; required unless the same account on the same server is saved again' }),
      })
      .strict(),
    z.object({ kind: z.enum(['google', 'microsoft']) }).strict(),
  ])
  .openapi('ChannelReadingInput', {
    description:
      'Read the channel’s mailbox: an IMAP account (checked by connecting before it is saved: 422 mailbox_unreachable with failed_step and the server’s words), or a Google/Microsoft sign-in; null stops reading.',
  });

export const ReadingSchema = z
  .object({
    kind: z.enum(['imap', 'google', 'microsoft']),
    host: z.string().nullable(),
    port: z.number().nullable(),
    tls: z.string().nullable(),
    username: z.string().nullable(),
    password_set: z.boolean(),
  })
  .openapi('ChannelReading');

export const ReaderSchema = z
  .object({
    state: z.enum(['connecting', 'idle', 'polling', 'needs_attention']),
    mode: z.enum(['idle', 'polling']).nullable(),
    last_read_at: z.string().nullable(),
    connected_at: z.string().nullable(),
    retry_at: z.string().nullable(),
    error: z.object({ step: z.string(), message: z.string() }).nullable(),
  })
  .openapi('ChannelReader');
