// A loopback Web Push service for tests: an HTTP server on 127.0.0.1 that checks every request as a
// real push service would (the VAPID JWT of RFC 8292: ES256 signature against the public key in
// `k=`, aud, exp, sub) and decrypts the aes128gcm payload (RFC 8188 + RFC 8291) with the keys of the
// browser subscription that the test made. Written here with node:crypto, apart from web-push.
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A browser's side of a subscription: its P-256 key pair and auth secret. */
export interface FakeBrowser {
  p256dh: string;
  auth: string;
  decrypt(body: Buffer): Buffer;
}

export function fakeBrowser(): FakeBrowser {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const uaPublic = ecdh.getPublicKey();
  const authSecret = randomBytes(16);
  return {
    p256dh: uaPublic.toString('base64url'),
    auth: authSecret.toString('base64url'),
    decrypt(body) {
      // RFC 8188 header: salt (16) | record size (4) | key id length (1) | key id (the sender's public key).
      const salt = body.subarray(0, 16);
      const idLength = body[20];
      const asPublic = body.subarray(21, 21 + idLength);
      const ciphertext = body.subarray(21 + idLength);
      if (idLength !== 65) throw new Error(`key id is ${idLength} bytes, not a P-256 public key`);
      const shared = ecdh.computeSecret(asPublic);
      // RFC 8291 section 3.4: IKM from the ECDH secret, the auth secret and both public keys.
      const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
      const ikm = Buffer.from(hkdfSync('sha256', shared, authSecret, keyInfo, 32));
      const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
      const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
      const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
      decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
      const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
      // The last record ends with the delimiter 0x02, then zero padding.
      let end = padded.length - 1;
      while (end >= 0 && padded[end] === 0) end--;
      if (padded[end] !== 2) throw new Error('no last-record delimiter');
      return padded.subarray(0, end);
    },
  };
}

export interface PushRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  jwt: { header: Record<string, unknown>; claims: { aud: string; exp: number; sub: string } };
  /** The decrypted payload, parsed. */
  payload: Record<string, unknown>;
}

export interface PushService {
  url: string;
  origin: string;
  received: PushRequest[];
  /** Problems found in requests (a bad JWT, a payload that does not decrypt); the test asserts it stays empty. */
  problems: string[];
  /** The status to answer for a path (default 201). */
  answer: Map<string, number>;
  /** The subscription keys by path, for decryption. */
  browsers: Map<string, FakeBrowser>;
  close(): Promise<void>;
}

export async function startPushService(vapidPublicKey: string, nowSeconds: () => number): Promise<PushService> {
  const point = Buffer.from(vapidPublicKey, 'base64url');
  const vapidKey = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
    format: 'jwk',
  });
  const service: PushService = {
    url: '',
    origin: '',
    received: [],
    problems: [],
    answer: new Map(),
    browsers: new Map(),
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      try {
        const auth = String(req.headers.authorization ?? '');
        const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(auth);
        if (!m) throw new Error(`Authorization is not "vapid t=…, k=…": ${auth.slice(0, 40)}`);
        if (m[2] !== vapidPublicKey) throw new Error('k= is not the server’s VAPID public key');
        const [h, c, sig] = m[1].split('.');
        const header = JSON.parse(Buffer.from(h, 'base64url').toString());
        const claims = JSON.parse(Buffer.from(c, 'base64url').toString());
        if (header.alg !== 'ES256') throw new Error(`alg ${header.alg}`);
        if (!verify('sha256', Buffer.from(`${h}.${c}`), { key: vapidKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(sig, 'base64url')))
          throw new Error('the JWT signature does not verify');
        if (claims.aud !== service.origin) throw new Error(`aud ${claims.aud} is not ${service.origin}`);
        const now = nowSeconds();
        if (!(claims.exp > now && claims.exp <= now + 24 * 3600)) throw new Error(`exp ${claims.exp} is not within 24 hours of ${now}`);
        if (typeof claims.sub !== 'string' || !/^(mailto:|https:)/.test(claims.sub)) throw new Error(`sub ${claims.sub}`);
        if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`content-encoding ${req.headers['content-encoding']}`);
        if (!req.headers.ttl) throw new Error('no TTL header');
        const browser = service.browsers.get(path);
        if (!browser) throw new Error(`no subscription at ${path}`);
        const payload = JSON.parse(browser.decrypt(Buffer.concat(chunks)).toString('utf8'));
        service.received.push({ path, headers: req.headers, jwt: { header, claims }, payload });
        res.writeHead(service.answer.get(path) ?? 201).end();
      } catch (error) {
        service.problems.push(`${path}: ${(error as Error).message}`);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  service.origin = `http://127.0.0.1:${port}`;
  service.url = service.origin;
  service.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return service;
}
