// What the API shows of an inbox's greeting, and its schema.
import { z } from '@hono/zod-openapi';
import type { InboxGreetingsTable } from '../db/schema.js';

export const DEFAULT_GREETING = {
  en: 'Thank you for your message. We have received it and will answer as soon as we can.',
  tr: 'Mesajınız için teşekkür ederiz. Mesajınızı aldık, en kısa sürede yanıtlayacağız.',
} as const;

export const GREETING_HELD = ['migration_underway', 'no_outgoing_mail'] as const;
export type GreetingHeld = (typeof GREETING_HELD)[number];

export function formatGreeting(row: Pick<InboxGreetingsTable, 'enabled' | 'text_en' | 'text_tr' | 'updated_at'> | undefined, held: GreetingHeld | null) {
  return {
    enabled: row?.enabled === 1,
    text: { en: row?.text_en ?? DEFAULT_GREETING.en, tr: row?.text_tr ?? DEFAULT_GREETING.tr },
    held,
    updated_at: row?.updated_at ?? null,
  };
}

export const GreetingSchema = z
  .object({
    enabled: z.boolean().openapi({ description: 'the first mail of a new e-mail conversation gets this automatic answer' }),
    text: z
      .object({ en: z.string(), tr: z.string() })
      .openapi({ description: 'the text per language; the contact’s `locale` attribute, else the inbox’s locale, picks one' }),
    held: z.enum(GREETING_HELD).nullable().openapi({
      description:
        'why no greeting goes out from this inbox now, whatever the mail: migration_underway (a migration into the inbox is under way, the old mailbox still answers), no_outgoing_mail (no e-mail channel of the inbox has an SMTP server); null when nothing holds it',
    }),
    updated_at: z.string().nullable(),
  })
  .openapi('InboxGreeting');
