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

/** A workspace with an owner (and their session token), a full-scope API key and one inbox. */
export async function seedWorkspace(ctx: Ctx, opts: { name?: string; origin?: 'bootstrap' | 'signup' } = {}): Promise<Seed> {
  const { workspace, personId } = await createWorkspace(ctx, {
    name: opts.name ?? `Acme ${randomText(4)}`,
    ownerEmail: `owner-${randomText(6)}@example.com`,
    origin: opts.origin ?? 'bootstrap',
  });
  const { token } = await createSession(ctx, personId);
  const { secret } = await createApiKey(ctx, { workspaceId: workspace.id, name: 'test' });
  const inbox = await createInbox(ctx, { workspaceId: workspace.id, name: 'Support' });
  return { workspaceId: workspace.id, ownerId: personId, ownerToken: token, apiKey: secret, inboxId: inbox.id };
}

/** Another person in the workspace with the given role; returns their session token. */
export async function addPerson(ctx: Ctx, workspaceId: string, role: Role, email = `${role}-${randomText(6)}@example.com`) {
  const person = await findOrCreatePerson(ctx, { email });
  await addMember(ctx, workspaceId, person.id, role);
  const { token } = await createSession(ctx, person.id);
  return { personId: person.id, email, token };
}
