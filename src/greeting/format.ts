// What the API shows of an inbox's greeting, and its schema.
import { z } from '@hono/zod-openapi';
import type { InboxGreetingsTable } from '../db/schema.js';

export const DEFAULT_GREETING = {
  en: 'Thank you for your message. We have received it and will answer as soon as we can.',
  tr: 'Mesajınız için teşekkür ederiz. Mesajınızı aldık, en kısa sürede yanıtlayacağız.',
} as const;

export const GREETING_HELD = ['migration_underway', 'no_outgoing_mail'] as const;
export type GreetingHeld = (typeof GREETING_HELD)[number];

type SettingsRow = Pick<InboxGreetingsTable, 'enabled' | 'text_en' | 'text_tr' | 'updated_at'>;

function formatSettings<H>(row: SettingsRow | undefined, defaults: { en: string; tr: string }, held: H | null) {
  return {
    enabled: row?.enabled === 1,
    text: { en: row?.text_en ?? defaults.en, tr: row?.text_tr ?? defaults.tr },
    held,
    updated_at: row?.updated_at ?? null,
  };
}

export const formatGreeting = (row: SettingsRow | undefined, held: GreetingHeld | null) => formatSettings(row, DEFAULT_GREETING, held);

export const NEXT_OPENING = '{next_opening}';
export const DEFAULT_AWAY = {
  en: `Thank you for your message. We are away right now and will answer from ${NEXT_OPENING}.`,
  tr: `Mesajınız için teşekkür ederiz. Şu anda çalışma saatlerimiz dışındayız; ${NEXT_OPENING} itibarıyla yanıtlayacağız.`,
} as const;
export const AWAY_HELD = [...GREETING_HELD, 'no_schedule'] as const;
export type AwayHeld = (typeof AWAY_HELD)[number];

export const formatAwayReply = (row: SettingsRow | undefined, held: AwayHeld | null) => formatSettings(row, DEFAULT_AWAY, held);

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

export const AwayReplySchema = z
  .object({
    enabled: z.boolean().openapi({ description: 'a customer’s mail that arrives while the inbox is closed by its business hours gets this automatic answer' }),
    text: z.object({ en: z.string(), tr: z.string() }).openapi({
      description: `the text per language (the contact’s \`locale\` attribute, else the inbox’s locale, picks one); ${NEXT_OPENING} becomes the inbox’s next opening on its own clock, e.g. “Monday 7 December, 09:00 GMT+3”`,
    }),
    held: z.enum(AWAY_HELD).nullable().openapi({
      description:
        'why no away reply goes out from this inbox now, whatever the mail: migration_underway, no_outgoing_mail (as for the greeting), no_schedule (the inbox has no business hours, so it is never closed); null when nothing holds it',
    }),
    updated_at: z.string().nullable(),
  })
  .openapi('InboxAwayReply');
