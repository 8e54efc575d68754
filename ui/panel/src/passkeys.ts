// Passkey ceremonies in the browser: the WebAuthn library loads only when a passkey is used.
import { api, must } from './api';

export const passkeysSupported = () => typeof window.PublicKeyCredential === 'function';

/** Signs in with a discoverable passkey (or one of the typed address's); the session cookie is set. */
export async function signInWithPasskey(email?: string) {
  const { startAuthentication } = await import('@simplewebauthn/browser');
  const options = await must(api.POST('/v1/auth/passkey/options', { body: email ? { email } : {} }));
  const credential = await startAuthentication({ optionsJSON: options as never });
  return must(api.POST('/v1/auth/passkey/verify', { body: { credential: credential as never } }));
}

/** Registers a new passkey for the signed-in person. */
export async function registerPasskey() {
  const { startRegistration } = await import('@simplewebauthn/browser');
  const options = await must(api.POST('/v1/me/passkeys/options'));
  const credential = await startRegistration({ optionsJSON: options as never });
  return must(api.POST('/v1/me/passkeys', { body: { credential: credential as never } }));
}
