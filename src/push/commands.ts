import { generateKeyPairSync } from 'node:crypto';
import { configCommand } from '../cli.js';

/** A VAPID (Web Push) key pair: the public key as an uncompressed P-256 point, both base64url. */
export function generateVapidKeys(): { publicKey: string; privateKey: string } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const jwk = privateKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  return { publicKey: point.toString('base64url'), privateKey: jwk.d! };
}

// A configCommand, as every command: a bad setting stops it with one line.
export const vapidKeysCommand = configCommand({
  meta: { name: 'vapid-keys', description: 'Print a new Web Push key pair (needs no database)' },
  args: {},
  run() {
    const keys = generateVapidKeys();
    process.stdout.write(`SVC_VAPID_PUBLIC_KEY=${keys.publicKey}\nSVC_VAPID_PRIVATE_KEY=${keys.privateKey}\n`);
  },
});
