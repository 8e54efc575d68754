// Auto-assignment settings per inbox, and a member's availability (issue 36).
import { type Access, authorize, requireInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { AssignmentMode } from '../db/schema.js';
import type { InboxRow } from '../inboxes/store.js';
import { iso } from '../platform/clock.js';
import { forbidden, invalid } from '../platform/errors.js';
import { type AvailabilityChoice, availabilityOf, setAvailability } from './availability.js';

const MODES: readonly AssignmentMode[] = ['off', 'round_robin', 'least_busy'];
export const MAX_CAPACITY = 1000;

export async function getInboxAssignment(ctx: Pick<Ctx, 'db'>, inbox: InboxRow) {
  const row = await ctx.db.selectFrom('inbox_assignment').selectAll().where('inbox_id', '=', inbox.id).executeTakeFirst();
  return { inbox_id: inbox.id, assignment: row?.assignment ?? 'off', capacity: row?.capacity ?? null, updated_at: row?.updated_at ?? null };
}

export async function setInboxAssignment(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  access: Access,
  inbox: InboxRow,
  input: { assignment: AssignmentMode; capacity: number | null },
) {
  authorize(access, 'inboxes:manage');
  requireInbox(access, inbox.id);
  if (!MODES.includes(input.assignment))
    throw invalid('assignment: off, round_robin or least_busy', { issues: [{ path: 'assignment', message: 'off, round_robin or least_busy' }] });
  if (input.capacity !== null && (!Number.isInteger(input.capacity) || input.capacity < 1 || input.capacity > MAX_CAPACITY))
    throw invalid(`capacity: 1 to ${MAX_CAPACITY}, or null`, { issues: [{ path: 'capacity', message: `a whole number from 1 to ${MAX_CAPACITY}, or null` }] });
  const now = iso(ctx.clock.now());
  await ctx.db
    .insertInto('inbox_assignment')
    .values({ inbox_id: inbox.id, workspace_id: inbox.workspace_id, assignment: input.assignment, capacity: input.capacity, updated_at: now })
    .onConflict((oc) => oc.column('inbox_id').doUpdateSet({ assignment: input.assignment, capacity: input.capacity, updated_at: now }))
    .execute();
  return getInboxAssignment(ctx, inbox);
}

function personOf(access: Access): string {
  if (access.actor.kind !== 'member') throw forbidden('availability belongs to a signed-in member, not to an API key');
  return access.actor.personId;
}

export async function myAvailability(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access) {
  const personId = personOf(access);
  return (await availabilityOf(ctx.db, access.workspaceId, [personId], ctx.clock.now())).get(personId)!;
}

export async function setMyAvailability(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, choice: AvailabilityChoice) {
  const personId = personOf(access);
  await setAvailability(ctx.db, access.workspaceId, personId, choice, ctx.clock.now());
  return myAvailability(ctx, access);
}
