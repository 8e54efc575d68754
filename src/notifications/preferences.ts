// Per-person notification choices: for each trigger, whether it reaches the open panel (realtime),
// the browser's push subscriptions (push) and the batched e-mail (email). No stored row = defaults.
import type { Ctx } from '../context.js';
import type { NotificationTrigger } from '../db/schema.js';
import { iso } from '../platform/clock.js';

export const NOTIFICATION_TRIGGERS = [
  'new_conversation',
  'assigned',
  'customer_reply',
  'mention',
  'snooze_ended',
  'sla_warning',
  'sla_breached',
  'reply_held',
  'sign_in_required',
] as const satisfies readonly NotificationTrigger[];
export const NOTIFICATION_CHANNELS = ['realtime', 'push', 'email'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];
export type NotificationPreferences = Record<NotificationTrigger, Record<NotificationChannel, boolean>>;
export type PreferencesPatch = Partial<Record<NotificationTrigger, Partial<Record<NotificationChannel, boolean>>>>;

/** Everything on, except e-mail for every new conversation (a busy inbox would fill the mailbox). */
export function defaultPreferences(): NotificationPreferences {
  return {
    new_conversation: { realtime: true, push: true, email: false },
    assigned: { realtime: true, push: true, email: true },
    customer_reply: { realtime: true, push: true, email: true },
    mention: { realtime: true, push: true, email: true },
    snooze_ended: { realtime: true, push: true, email: true },
    sla_warning: { realtime: true, push: true, email: true },
    sla_breached: { realtime: true, push: true, email: true },
    reply_held: { realtime: true, push: true, email: true },
    sign_in_required: { realtime: true, push: true, email: true },
  };
}

function merged(stored: string | null | undefined): NotificationPreferences {
  const out = defaultPreferences();
  if (!stored) return out;
  const saved = JSON.parse(stored) as PreferencesPatch;
  for (const t of NOTIFICATION_TRIGGERS) {
    for (const c of NOTIFICATION_CHANNELS) {
      const v = saved[t]?.[c];
      if (typeof v === 'boolean') out[t][c] = v;
    }
  }
  return out;
}

export async function preferencesOf(ctx: Pick<Ctx, 'db'>, personIds: readonly string[]): Promise<Map<string, NotificationPreferences>> {
  const rows = personIds.length
    ? await ctx.db
        .selectFrom('notification_preferences')
        .select(['person_id', 'settings'])
        .where('person_id', 'in', [...personIds])
        .execute()
    : [];
  const stored = new Map(rows.map((r) => [r.person_id, r.settings]));
  return new Map(personIds.map((id) => [id, merged(stored.get(id))]));
}

export async function getPreferences(ctx: Pick<Ctx, 'db'>, personId: string): Promise<NotificationPreferences> {
  return (await preferencesOf(ctx, [personId])).get(personId)!;
}

/** Changes the given switches and keeps the others; answers the whole set. */
export async function updatePreferences(ctx: Pick<Ctx, 'db' | 'clock'>, personId: string, patch: PreferencesPatch): Promise<NotificationPreferences> {
  return ctx.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('notification_preferences').select('settings').where('person_id', '=', personId).executeTakeFirst();
    const next = merged(row?.settings);
    for (const t of NOTIFICATION_TRIGGERS) {
      for (const c of NOTIFICATION_CHANNELS) {
        const v = patch[t]?.[c];
        if (typeof v === 'boolean') next[t][c] = v;
      }
    }
    const values = { person_id: personId, settings: JSON.stringify(next), updated_at: iso(ctx.clock.now()) };
    await trx
      .insertInto('notification_preferences')
      .values(values)
      .onConflict((oc) => oc.column('person_id').doUpdateSet({ settings: values.settings, updated_at: values.updated_at }))
      .execute();
    return next;
  });
}
