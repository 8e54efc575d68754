// Passkeys (WebAuthn, with @simplewebauthn/server): a signed-in person registers, lists, renames and
// deletes them; anyone signs in with one, either with a discoverable credential (no address typed)
// or after typing their address. The relying party is SVC_PUBLIC_URL: its host is the RP ID and its
// origin the only origin accepted.
//
// Every ceremony starts with options that carry a random challenge, stored in passkey_challenges:
// the response names its challenge in clientDataJSON, the row is deleted before the response is
// verified (single use, also when verification fails) and refused once expired. Sign counters must
// grow (unless the authenticator keeps none: both zero), which refuses a cloned authenticator.
import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Config } from '../config.js';
import type { Ctx } from '../context.js';
import type { PasskeyChallengePurpose, PasskeysTable } from '../db/schema.js';
import { iso, MINUTE } from '../platform/clock.js';
import { type AppError, conflict, invalid, notFound, unauthorized } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { olderThanRule } from '../platform/retention-rule.js';
import { serverKey } from '../platform/server-key.js';
import { createSession, findPersonByEmail, normalizeEmail, type PersonRow } from './service.js';

export type PasskeyRow = Omit<PasskeysTable, 'sign_count'> & { sign_count: number };

/** How long options (and their challenge) stay valid; also the timeout the browser is given. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * MINUTE;
export const PASSKEYS_PER_PERSON = 25;
export const PASSKEY_NAME_MAX = 100;

// Log fields name a passkey `credential` (its pk_ id): the logger redacts any field named pass….

const RP_NAME = 'svc';

let webauthnLibrary: Promise<typeof import('@simplewebauthn/server')> | undefined;
/** @simplewebauthn/server, loaded on first use: importing it takes about a second and 25 MB. */
const webauthn = () => (webauthnLibrary ??= import('@simplewebauthn/server'));

export interface RelyingParty {
  id: string;
  origin: string;
}

/**
 * The relying party of SVC_PUBLIC_URL. Browsers offer WebAuthn only in a secure context and only
 * for a domain name, so an IP address or plain http on a host other than localhost is refused here
 * with a clear answer rather than failing later in the browser.
 */
export function relyingParty(config: Pick<Config, 'publicUrl'>): RelyingParty {
  const url = new URL(config.publicUrl);
  const host = url.hostname;
  const local = host === 'localhost' || host.endsWith('.localhost');
  if (isIP(host.replace(/^\[|\]$/g, '')) || (url.protocol !== 'https:' && !local)) {
    throw conflict(`passkeys need SVC_PUBLIC_URL to be an https address with a domain name (or http://localhost); it is ${url.origin}`, 'passkeys_unavailable');
  }
  return { id: host, origin: url.origin };
}

/** The WebAuthn user handle of a person: their id (random, not personal data), so it is stable. */
function userHandle(personId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(personId, 'utf8'));
}

async function storeChallenge(ctx: Pick<Ctx, 'db' | 'clock'>, challenge: string, purpose: PasskeyChallengePurpose, personId: string | null) {
  const now = ctx.clock.now().getTime();
  await ctx.db
    .insertInto('passkey_challenges')
    .values({ challenge, purpose, person_id: personId, created_at: iso(now), expires_at: iso(now + PASSKEY_CHALLENGE_TTL_MS) })
    .execute();
}

/** The challenge a response answers, read from its clientDataJSON (verification checks it again). */
function challengeOf(clientDataJSON: string, refuse: () => AppError): string {
  let challenge: unknown;
  try {
    challenge = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))?.challenge;
  } catch {
    throw refuse();
  }
  if (typeof challenge !== 'string' || !/^[A-Za-z0-9_-]{16,200}$/.test(challenge)) throw refuse();
  return challenge;
}

/**
 * Takes a challenge for one use: the row must exist with this purpose (and person, for
 * registration) and is deleted before anything else happens, so a response can be tried once;
 * of two uses at the same moment only the one that deleted the row goes on.
 */
async function takeChallenge(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  challenge: string,
  purposes: PasskeyChallengePurpose[],
  refuse: () => AppError,
  personId?: string,
) {
  let q = ctx.db.selectFrom('passkey_challenges').selectAll().where('challenge', '=', challenge).where('purpose', 'in', purposes);
  if (personId) q = q.where('person_id', '=', personId);
  const row = await q.executeTakeFirst();
  if (!row) throw refuse();
  const deleted = await ctx.db.deleteFrom('passkey_challenges').where('challenge', '=', challenge).executeTakeFirst();
  if (Number(deleted.numDeletedRows) !== 1) throw refuse();
  if (row.expires_at <= iso(ctx.clock.now())) throw refuse();
  return row;
}

function transportsOf(row: Pick<PasskeyRow, 'transports'>): AuthenticatorTransport[] | undefined {
  return row.transports ? (JSON.parse(row.transports) as AuthenticatorTransport[]) : undefined;
}

async function passkeysOf(ctx: Pick<Ctx, 'db'>, personId: string): Promise<PasskeyRow[]> {
  return (await ctx.db.selectFrom('passkeys').selectAll().where('person_id', '=', personId).orderBy('id', 'desc').execute()) as PasskeyRow[];
}

// ---- Registration (a signed-in person) ----

/** Options for navigator.credentials.create(): a discoverable credential with user verification. */
export async function passkeyRegistrationOptions(ctx: Pick<Ctx, 'db' | 'clock' | 'config'>, personId: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = relyingParty(ctx.config);
  const person = await ctx.db.selectFrom('people').select(['id', 'email', 'name']).where('id', '=', personId).executeTakeFirst();
  if (!person) throw notFound('person');
  const existing = await passkeysOf(ctx, personId);
  if (existing.length >= PASSKEYS_PER_PERSON)
    throw conflict(`a person may register at most ${PASSKEYS_PER_PERSON} passkeys; delete one first`, 'passkey_limit');
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: person.email,
    userDisplayName: person.name ?? person.email,
    userID: userHandle(person.id),
    timeout: PASSKEY_CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  await storeChallenge(ctx, options.challenge, 'register', personId);
  return options;
}

/** Verifies the browser's answer to registration options and stores the passkey. */
export async function registerPasskey(
  ctx: Pick<Ctx, 'db' | 'clock' | 'config' | 'log'>,
  personId: string,
  input: { credential: RegistrationResponseJSON; name?: string | null },
): Promise<PasskeyRow> {
  const rp = relyingParty(ctx.config);
  const refuse = () => invalid('the registration answers no open passkey options of yours (unknown, used or expired); ask for new options');
  const challenge = await takeChallenge(ctx, challengeOf(input.credential.response.clientDataJSON, refuse), ['register'], refuse, personId);
  const { verifyRegistrationResponse } = await webauthn();
  let info: NonNullable<Awaited<ReturnType<typeof verifyRegistrationResponse>>['registrationInfo']>;
  try {
    const result = await verifyRegistrationResponse({
      response: input.credential,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!result.verified) throw new Error('the response was not verified');
    info = result.registrationInfo;
  } catch (err) {
    throw invalid(`the passkey could not be registered: ${(err as Error).message}`);
  }
  const now = iso(ctx.clock.now());
  const row: PasskeyRow = {
    id: newId('pk'),
    person_id: personId,
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    sign_count: info.credential.counter,
    transports: JSON.stringify(info.credential.transports ?? input.credential.response.transports ?? []),
    aaguid: info.aaguid,
    backup_eligible: info.credentialDeviceType === 'multiDevice' ? 1 : 0,
    backed_up: info.credentialBackedUp ? 1 : 0,
    name: input.name ?? null,
    created_at: now,
    last_used_at: null,
  };
  const inserted = await ctx.db
    .insertInto('passkeys')
    .values(row)
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) throw conflict('this passkey is registered already', 'passkey_exists');
  ctx.log.info('passkey registered', { person_id: personId, credential: row.id });
  return row;
}

// ---- Managing one's passkeys ----

export async function listPasskeys(ctx: Pick<Ctx, 'db'>, personId: string, page: { limit: number; before?: string }): Promise<PasskeyRow[]> {
  let q = ctx.db.selectFrom('passkeys').selectAll().where('person_id', '=', personId);
  if (page.before) q = q.where('id', '<', page.before);
  return (await q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute()) as PasskeyRow[];
}

export async function renamePasskey(ctx: Pick<Ctx, 'db'>, personId: string, id: string, name: string | null): Promise<PasskeyRow> {
  const r = await ctx.db.updateTable('passkeys').set({ name }).where('id', '=', id).where('person_id', '=', personId).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) throw notFound('passkey');
  return (await ctx.db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as PasskeyRow;
}

export async function deletePasskey(ctx: Pick<Ctx, 'db' | 'log'>, personId: string, id: string): Promise<void> {
  const r = await ctx.db.deleteFrom('passkeys').where('id', '=', id).where('person_id', '=', personId).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw notFound('passkey');
  ctx.log.info('passkey deleted', { person_id: personId, credential: id });
}

/** What the API shows: never the public key or the credential id. */
export function formatPasskey(p: PasskeyRow) {
  return {
    id: p.id,
    name: p.name,
    transports: (transportsOf(p) ?? []) as string[],
    synced: p.backed_up === 1,
    created_at: p.created_at,
    last_used_at: p.last_used_at,
  };
}

// ---- Signing in ----

const DECOY_KEY = 'passkey_decoy_key';

/** A random key of this server (sealed in server_meta) for the stand-in credential of unknown addresses. */
const decoyKey = (ctx: Pick<Ctx, 'db' | 'sealer'>): Promise<Buffer> => serverKey(ctx, DECOY_KEY);

/**
 * Options for navigator.credentials.get(). Without an address any of the browser's passkeys for
 * this server may answer (discoverable credentials). With an address, only that person's passkeys:
 * an address without an account or without passkeys gets one stand-in credential id, the same
 * each time, so the answer does not tell whether the address has an account.
 */
export async function passkeySignInOptions(
  ctx: Pick<Ctx, 'db' | 'clock' | 'config' | 'sealer'>,
  input: { email?: string },
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const rp = relyingParty(ctx.config);
  let purpose: PasskeyChallengePurpose = 'sign_in_any';
  let personId: string | null = null;
  let allowCredentials: { id: string; transports?: AuthenticatorTransport[] }[] | undefined;
  if (input.email !== undefined) {
    const email = normalizeEmail(input.email);
    purpose = 'sign_in_person';
    const person = await findPersonByEmail(ctx, email);
    const passkeys = person ? await passkeysOf(ctx, person.id) : [];
    if (person && passkeys.length) {
      personId = person.id;
      allowCredentials = passkeys.map((p) => ({ id: p.credential_id, transports: transportsOf(p) }));
    } else {
      const decoy = createHmac('sha256', await decoyKey(ctx))
        .update(email)
        .digest()
        .toString('base64url');
      allowCredentials = [{ id: decoy, transports: ['internal', 'hybrid'] }];
    }
  }
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials,
    userVerification: 'required',
    timeout: PASSKEY_CHALLENGE_TTL_MS,
  });
  await storeChallenge(ctx, options.challenge, purpose, personId);
  return options;
}

/** Verifies the browser's answer to sign-in options and opens a session (as a sign-in code does). */
export async function signInWithPasskey(
  ctx: Pick<Ctx, 'db' | 'clock' | 'config' | 'log'>,
  input: { credential: AuthenticationResponseJSON },
): Promise<{ token: string; expiresAt: string; person: PersonRow }> {
  const rp = relyingParty(ctx.config);
  const refuse = (why = 'the passkey was not accepted') => unauthorized(why);
  const staleChallenge = () => refuse('the sign-in answers no open passkey options (unknown, used or expired); ask for new options');
  const challenge = await takeChallenge(
    ctx,
    challengeOf(input.credential.response.clientDataJSON, staleChallenge),
    ['sign_in_any', 'sign_in_person'],
    staleChallenge,
  );
  const passkey = (await ctx.db.selectFrom('passkeys').selectAll().where('credential_id', '=', input.credential.id).executeTakeFirst()) as
    | PasskeyRow
    | undefined;
  if (!passkey) throw refuse('this passkey is not registered here (it may have been deleted)');
  if (challenge.purpose === 'sign_in_person' && passkey.person_id !== challenge.person_id) throw refuse('this passkey does not belong to the address given');
  const handle = input.credential.response.userHandle;
  if (handle && handle !== Buffer.from(userHandle(passkey.person_id)).toString('base64url')) throw refuse('the passkey answered for another user');

  const { verifyAuthenticationResponse } = await webauthn();
  let newCounter: number;
  let backedUp: boolean;
  try {
    const result = await verifyAuthenticationResponse({
      response: input.credential,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: passkey.sign_count,
        transports: transportsOf(passkey),
      },
      requireUserVerification: true,
    });
    if (!result.verified) throw new Error('the signature does not verify');
    newCounter = result.authenticationInfo.newCounter;
    backedUp = result.authenticationInfo.credentialBackedUp;
  } catch (err) {
    const message = (err as Error).message;
    if (/counter/i.test(message)) {
      ctx.log.warn('passkey sign counter did not grow; the authenticator may have been cloned', { person_id: passkey.person_id, credential: passkey.id });
      throw refuse('the passkey’s signature counter did not grow (a copied authenticator?); sign in another way');
    }
    throw refuse(`the passkey was not accepted: ${message}`);
  }
  // Only from the counter that was checked: of two sign-ins racing with one authenticator, one wins.
  const updated = await ctx.db
    .updateTable('passkeys')
    .set({ sign_count: newCounter, backed_up: backedUp ? 1 : 0, last_used_at: iso(ctx.clock.now()) })
    .where('id', '=', passkey.id)
    .where('sign_count', '=', passkey.sign_count)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) throw refuse('the passkey was used at the same moment elsewhere; try again');
  const person = await ctx.db.selectFrom('people').selectAll().where('id', '=', passkey.person_id).executeTakeFirstOrThrow();
  const session = await createSession(ctx, person.id);
  ctx.log.info('signed in with a passkey', { person_id: person.id, credential: passkey.id });
  return { ...session, person };
}

// ---- Retention ----

/** Challenges past their expiry (they can no longer be used). */
export const passkeyChallengesRule = olderThanRule({
  name: 'passkey_challenges',
  table: 'passkey_challenges',
  key: 'challenge',
  columns: ['expires_at'],
  keptMs: 0,
  inclusive: true,
});
