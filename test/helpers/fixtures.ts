// Ready-made workspaces, people, keys and inboxes, made through the same service functions the API uses.
import { createApiKey } from '../../src/api-keys/service.js';
import type { Ctx } from '../../src/context.js';
import type { Role } from '../../src/db/schema.js';
import { createInbox } from '../../src/inboxes/service.js';
import { addMember } from '../../src/members/store.js';
import { createSession, findOrCreatePerson } from '../../src/people/service.js';
import { randomText } from '../../src/platform/ids.js';
import { createWorkspace } from '../../src/workspaces/service.js';

export interface Seed {
  workspaceId: string;
  ownerId: string;
  ownerToken: string;
  apiKey: string;
  inboxId: string;
}

// Replies from the panel go out at once in tests: the product's 10 s undo-send hold would only slow
// every browser test that waits for a mail. Tests of undo send set the delay themselves.
const sendAtOnce = (ctx: Ctx, personId: string) => ctx.db.updateTable('people').set({ undo_send_seconds: 0 }).where('id', '=', personId).execute();

/** A workspace with an owner (and their session token), a full-scope API key and one inbox; the owner's undo-send delay is 0. */
export async function seedWorkspace(ctx: Ctx, opts: { name?: string; origin?: 'bootstrap' | 'signup' } = {}): Promise<Seed> {
  const { workspace, personId } = await createWorkspace(ctx, {
    name: opts.name ?? `Acme ${randomText(4)}`,
    ownerEmail: `owner-${randomText(6)}@example.com`,
    origin: opts.origin ?? 'bootstrap',
  });
  await sendAtOnce(ctx, personId);
  const { token } = await createSession(ctx, personId);
  const { secret } = await createApiKey(ctx, { workspaceId: workspace.id, name: 'test' });
  const inbox = await createInbox(ctx, { workspaceId: workspace.id, name: 'Support' });
  return { workspaceId: workspace.id, ownerId: personId, ownerToken: token, apiKey: secret, inboxId: inbox.id };
}

/** Another person in the workspace with the given role (undo-send delay 0); returns their session token. */
export async function addPerson(ctx: Ctx, workspaceId: string, role: Role, email = `${role}-${randomText(6)}@example.com`) {
  const person = await findOrCreatePerson(ctx, { email });
  await addMember(ctx, workspaceId, person.id, role);
  await sendAtOnce(ctx, person.id);
  const { token } = await createSession(ctx, person.id);
  return { personId: person.id, email, token };
}
