import { defineCommand } from 'citty';
import { dbCommand } from '../cli.js';
import { notFound } from '../platform/errors.js';
import { deletePerson, findPersonByEmail, membershipsOf, workspacesOnlyOwnedBy } from './service.js';
import { createSignInLink, SIGN_IN_LINK_TTL_MS } from './sign-in-links.js';

const deletePersonCommand = dbCommand({
  meta: {
    name: 'delete',
    description: 'Delete an account with its memberships, sessions, passkeys and push subscriptions; without --yes only says what it would delete',
  },
  args: {
    email: { type: 'string', required: true, description: 'the person’s e-mail address' },
    yes: { type: 'boolean', description: 'really delete it' },
  },
  async run({ app, args, io }) {
    const person = await findPersonByEmail(app, args.email);
    if (!person) throw notFound(`account ${JSON.stringify(args.email.trim().toLowerCase())}`);
    if (!args.yes) {
      const memberships = await membershipsOf(app, person.id);
      const sole = await workspacesOnlyOwnedBy(app.db, person.id);
      io.say(
        `would delete the account ${person.email} (${person.id}) with ${memberships.length} membership(s), its sessions, passkeys and push subscriptions; their messages stay without an author` +
          (sole.length ? `; refused now: only owner of ${sole.map((w) => `${JSON.stringify(w.name)} (${w.id})`).join(', ')}` : '') +
          '; nothing was changed (pass --yes to delete)',
      );
      return;
    }
    const r = await deletePerson(app, person.id);
    io.say(
      `deleted the account ${person.email} (${person.id}): ${r.memberships} membership(s), ${r.sessions} session(s), ${r.passkeys} passkey(s), ${r.push_subscriptions} push subscription(s)`,
    );
  },
});

const signInLinkCommand = dbCommand({
  meta: { name: 'sign-in-link', description: 'Print a one-time sign-in link for a person (15 minutes, single use); the way in without a mail account' },
  args: { email: { type: 'string', required: true, description: 'the person’s e-mail address' } },
  async run({ app, args, io }) {
    const person = await findPersonByEmail(app, args.email);
    if (!person) throw notFound(`account ${JSON.stringify(args.email.trim().toLowerCase())}`);
    const link = await createSignInLink(app, person.id);
    io.say(`a sign-in link for ${person.email} (${person.id}); it works once, for ${SIGN_IN_LINK_TTL_MS / 60_000} minutes (until ${link.expiresAt}):`);
    io.out(link.url);
  },
});

export const personCommand = defineCommand({
  meta: { name: 'person', description: 'People (accounts)' },
  subCommands: { delete: deletePersonCommand, 'sign-in-link': signInLinkCommand },
});
