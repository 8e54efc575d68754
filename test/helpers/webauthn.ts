// A software WebAuthn authenticator (ES256, "none" attestation) for tests below the browser: it
// answers the server's options as a browser and authenticator would, and can be told to lie (another
// origin or RP ID, a counter going backwards, no user verification) to test the server's checks.
// The main flow is tested in a real browser (test/e2e); this covers the refusals.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

export interface Lies {
  origin?: string;
  rpId?: string;
  /** The counter to report (otherwise one more than last time). */
  counter?: number;
  /** Clear the user-verified flag. */
  unverified?: boolean;
  /** Another challenge than the options' one. */
  challenge?: string;
  userHandle?: string;
}

export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  counter = 0;
  userHandle: string | undefined;

  constructor(readonly origin: string) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicJwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  private rpId(lies: Lies) {
    return lies.rpId ?? new URL(this.origin).hostname;
  }

  private clientData(type: string, challenge: string, lies: Lies) {
    return Buffer.from(JSON.stringify({ type, challenge: lies.challenge ?? challenge, origin: lies.origin ?? this.origin, crossOrigin: false }));
  }

  private authData(lies: Lies, attested?: Buffer) {
    const UP = 0x01,
      UV = 0x04,
      AT = 0x40;
    const flags = UP | (lies.unverified ? 0 : UV) | (attested ? AT : 0);
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(lies.counter ?? this.counter);
    return Buffer.concat([sha256(this.rpId(lies)), Buffer.from([flags]), counter, attested ?? Buffer.alloc(0)]);
  }

  /** The answer to registration options (RegistrationResponseJSON). */
  register(options: { challenge: string; user: { id: string } }, lies: Lies = {}) {
    this.userHandle = options.user.id;
    const cose = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, new Uint8Array(Buffer.from(this.publicJwk.x, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(this.publicJwk.y, 'base64url'))],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16) /* aaguid */, idLength, this.credentialId, Buffer.from(isoCBOR.encode(cose))]);
    const authData = this.authData(lies, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(authData)],
      ]) as never,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge, lies)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
    };
  }

  /** The answer to sign-in options (AuthenticationResponseJSON); counts up unless told a counter. */
  assert(options: { challenge: string }, lies: Lies = {}) {
    if (lies.counter === undefined) this.counter++;
    const clientData = this.clientData('webauthn.get', options.challenge, lies);
    const authData = this.authData(lies);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...((lies.userHandle ?? this.userHandle) ? { userHandle: lies.userHandle ?? this.userHandle } : {}),
      },
    };
  }
}
