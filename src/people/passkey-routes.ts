// Passkey routes: sign in with a passkey (/v1/auth/passkey/…) and a signed-in person's passkeys
// (/v1/me/passkeys…). The ceremonies are in ./passkeys.ts.
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requirePerson } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, noContent } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import {
  deletePasskey,
  formatPasskey,
  listPasskeys,
  PASSKEY_NAME_MAX,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  registerPasskey,
  renamePasskey,
  signInWithPasskey,
} from './passkeys.js';
import { answerNewSession, NewSession } from './routes.js';

const base64url = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');
const credentialCommon = {
  id: base64url(1400),
  rawId: base64url(1400),
  type: z.literal('public-key'),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
};
const Transport = z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

const RegistrationCredential = z
  .object({
    ...credentialCommon,
    response: z.object({
      clientDataJSON: base64url(10_000),
      attestationObject: base64url(200_000),
      authenticatorData: base64url(100_000).optional(),
      transports: z.array(Transport).max(10).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
      publicKey: base64url(10_000).optional(),
    }),
  })
  .openapi({ description: 'what @simplewebauthn/browser’s startRegistration() returns (RegistrationResponseJSON)' });

const AuthenticationCredential = z
  .object({
    ...credentialCommon,
    response: z.object({
      clientDataJSON: base64url(10_000),
      authenticatorData: base64url(100_000),
      signature: base64url(10_000),
      userHandle: base64url(1000).optional(),
    }),
  })
  .openapi({ description: 'what @simplewebauthn/browser’s startAuthentication() returns (AuthenticationResponseJSON)' });

const CreationOptions = z
  .object({
    challenge: z.string(),
    rp: z.object({ id: z.string().optional(), name: z.string() }),
    user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
  })
  .catchall(z.unknown())
  .openapi({ description: 'PublicKeyCredentialCreationOptionsJSON: pass to startRegistration({ optionsJSON })' });
const RequestOptions = z
  .object({
    challenge: z.string(),
    rpId: z.string().optional(),
    allowCredentials: z.array(z.object({ id: z.string(), type: z.string() }).catchall(z.unknown())).optional(),
  })
  .catchall(z.unknown())
  .openapi({ description: 'PublicKeyCredentialRequestOptionsJSON: pass to startAuthentication({ optionsJSON })' });

const Name = z.string().trim().min(1).max(PASSKEY_NAME_MAX);
const Passkey = z.object({
  id: z.string(),
  name: z.string().nullable(),
  transports: z.array(z.string()),
  synced: z.boolean().openapi({ description: 'the authenticator says the passkey is backed up (synced to other devices)' }),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
});
const PasskeyId = z.object({ passkeyId: idParam('passkeyId', 'pk_01hxyz') });
const tags = ['passkeys'];

export function registerPasskeyRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/passkey/options',
      tags,
      summary: 'Start signing in with a passkey',
      security: [],
      description:
        'Without `email`, any passkey of this server that the browser holds may answer (a discoverable credential). With `email`, only that person’s passkeys; an address without an account or passkeys gets options that no passkey can answer, so the answer does not reveal accounts. The options are good once, for 5 minutes. 409 `passkeys_unavailable` when SVC_PUBLIC_URL is not a secure origin with a domain name.',
      request: { body: jsonBody(z.object({ email: z.string().min(3).max(254).optional() }).strict()) },
      responses: { 200: jsonAnswer(RequestOptions, 'options for navigator.credentials.get()') },
    }),
    async (c) => c.json(await passkeySignInOptions(ctx, c.req.valid('json')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/passkey/verify',
      tags,
      summary: 'Finish signing in with a passkey: a session, as with a sign-in code',
      security: [],
      description:
        'Refused with 401 when the options were already used or expired, the passkey is unknown or belongs to another address than the one typed, the origin or RP ID differ, the user was not verified, or the signature counter did not grow.',
      request: { body: jsonBody(z.object({ credential: AuthenticationCredential }).strict()) },
      responses: { 200: jsonAnswer(NewSession, 'a session: the token works as a Bearer credential and is also set as a cookie') },
    }),
    async (c) => answerNewSession(c, ctx, await signInWithPasskey(ctx, c.req.valid('json'))),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/me/passkeys/options',
      tags,
      summary: 'Start registering a passkey for the signed-in person',
      description: 'A discoverable credential with user verification; the person’s passkeys are excluded. Good once, for 5 minutes.',
      security: bearer,
      responses: { 200: jsonAnswer(CreationOptions, 'options for navigator.credentials.create()') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      return c.json(await passkeyRegistrationOptions(ctx, person.personId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/me/passkeys',
      tags,
      summary: 'Finish registering a passkey',
      description:
        '400 when the options are unknown, used or expired, or the response does not verify (origin, RP ID, user verification); 409 `passkey_exists` for a passkey registered already.',
      security: bearer,
      request: { body: jsonBody(z.object({ credential: RegistrationCredential, name: Name.optional() }).strict()) },
      responses: { 201: jsonAnswer(Passkey, 'the passkey') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      return c.json(formatPasskey(await registerPasskey(ctx, person.personId, c.req.valid('json'))), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/me/passkeys',
      tags,
      summary: 'The signed-in person’s passkeys, newest first',
      security: bearer,
      request: { query: listQuery },
      responses: { 200: jsonAnswer(pageSchema(Passkey), 'passkeys') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      const q = c.req.valid('query');
      const limit = q.limit ?? 50;
      const rows = await listPasskeys(ctx, person.personId, { limit, before: decodeCursor(q.cursor, z.string()) });
      return c.json(
        toPage(rows, limit, (r) => r.id, formatPasskey),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/me/passkeys/{passkeyId}',
      tags,
      summary: 'Rename a passkey',
      security: bearer,
      request: { params: PasskeyId, body: jsonBody(z.object({ name: Name.nullable() }).strict()) },
      responses: { 200: jsonAnswer(Passkey, 'the passkey') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      return c.json(formatPasskey(await renamePasskey(ctx, person.personId, c.req.valid('param').passkeyId, c.req.valid('json').name)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/me/passkeys/{passkeyId}',
      tags,
      summary: 'Delete a passkey (it no longer signs in)',
      security: bearer,
      request: { params: PasskeyId },
      responses: { 204: noContent('deleted') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      await deletePasskey(ctx, person.personId, c.req.valid('param').passkeyId);
      return c.body(null, 204);
    },
  );
}
