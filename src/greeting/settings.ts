// The settings of an automatic answer (the greeting, the out-of-office reply): on or off and a text
// per language, one row per inbox.
import type { Ctx } from '../context.js';
import type { InboxGreetingsTable } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import { charCount } from '../platform/text.js';
import type { GreetingLocale } from './rules.js';

export const ANSWER_MAX_CHARS = 5000;

export type AnswerTable = 'inbox_greetings' | 'inbox_away_replies';
export type AnswerSettingsRow = InboxGreetingsTable;
export type AnswerSettingsInput = { enabled?: boolean; text?: Partial<Record<GreetingLocale, string>> };

function checkText(text: string | undefined, locale: GreetingLocale): string | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!trimmed) throw invalid(`text.${locale} must not be empty`);
  if (charCount(trimmed) > ANSWER_MAX_CHARS) throw invalid(`text.${locale} must be at most ${ANSWER_MAX_CHARS} characters`);
  return trimmed;
}

export async function readAnswerSettings(db: Ctx['db'], table: AnswerTable, inboxId: string): Promise<AnswerSettingsRow | undefined> {
  return db.selectFrom(table).selectAll().where('inbox_id', '=', inboxId).executeTakeFirst();
}

/** Saves what `input` names (validated first: a refused change changes nothing); the rest stays. */
export async function saveAnswerSettings(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  table: AnswerTable,
  workspaceId: string,
  inboxId: string,
  input: AnswerSettingsInput,
  defaults: Record<GreetingLocale, string>,
): Promise<AnswerSettingsRow> {
  const en = checkText(input.text?.en, 'en');
  const tr = checkText(input.text?.tr, 'tr');
  const now = iso(ctx.clock.now());
  const current = await readAnswerSettings(ctx.db, table, inboxId);
  const row: AnswerSettingsRow = {
    inbox_id: inboxId,
    workspace_id: workspaceId,
    enabled: input.enabled === undefined ? (current?.enabled ?? 0) : input.enabled ? 1 : 0,
    text_en: en ?? current?.text_en ?? defaults.en,
    text_tr: tr ?? current?.text_tr ?? defaults.tr,
    updated_at: now,
  };
  await ctx.db
    .insertInto(table)
    .values(row)
    .onConflict((oc) => oc.column('inbox_id').doUpdateSet({ enabled: row.enabled, text_en: row.text_en, text_tr: row.text_tr, updated_at: now }))
    .execute();
  return row;
}
