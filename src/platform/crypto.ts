import { createCipheriv, createDecipheriv, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, decodeKey } from '../config.js';
import type { Logger } from './log.js';

const KEY_VERSION = 1;

export class MasterKeyError extends Error {}

/**
 * Seals secrets (SMTP passwords, webhook secrets, identity secrets, migration passwords) under the
 * master key with AES-256-GCM. Layout: [version byte][12-byte nonce][ciphertext][16-byte tag],
 * base64. The version byte lets a later key rotation keep reading old rows.
 */
export class Sealer {
  constructor(
    private readonly key: Buffer,
    /** Set when the key was generated at this start and is not written yet (see verifyMasterKey). */
    private unsaved?: { file: string; log: Logger },
  ) {
    if (key.length !== 32) throw new MasterKeyError('the master key must be 32 bytes');
  }

  /** Where a key generated at this start would be written; undefined when the key was given or read. */
  get generatedKeyFile(): string | undefined {
    return this.unsaved?.file;
  }

  /** Writes the key generated at this start (0600, never over an existing file), with the backup warning. */
  saveGeneratedKey(): void {
    if (!this.unsaved) return;
    const { file, log } = this.unsaved;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, this.key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    log.warn('SVC_MASTER_KEY is not set; generated a master key file, back it up apart from the data', { file });
    this.unsaved = undefined;
  }

  seal(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([KEY_VERSION]), nonce, body, cipher.getAuthTag()]).toString('base64');
  }

  open(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64');
    if (raw.length < 1 + 12 + 16 || raw[0] !== KEY_VERSION) throw new MasterKeyError('sealed value has an unknown format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(1, 13));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    try {
      return Buffer.concat([decipher.update(raw.subarray(13, raw.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new MasterKeyError('a sealed secret cannot be opened with this master key');
    }
  }
}

/** The master key from SVC_MASTER_KEY, or else from $SVC_DATA_DIR/master.key; undefined when neither is there. */
function configuredMasterKey(config: Config): Buffer | undefined {
  if (config.masterKey) return config.masterKey;
  const file = masterKeyFile(config);
  if (!fs.existsSync(file)) return undefined;
  const key = decodeKey(fs.readFileSync(file, 'utf8').trim());
  if (!key) throw new MasterKeyError(`${file} does not hold a 32-byte key (hex or base64)`);
  return key;
}

function masterKeyFile(config: Config): string {
  return path.join(config.dataDir, 'master.key');
}

/** The configured master key (SVC_MASTER_KEY or master.key); never creates one. */
export function resolveMasterKey(config: Config, _log: Logger, _opts: { create: false }): Buffer {
  const key = configuredMasterKey(config);
  if (!key) throw new MasterKeyError('SVC_MASTER_KEY is not set and there is no master.key in the data directory');
  return key;
}

/**
 * The sealer under the configured master key. With `create` and no key configured, a new key: it is
 * written to master.key (0600, with a warning that it must be backed up apart from the data) only
 * once verifyMasterKey has found a new database, so restored data started without its key never
 * gets a wrong key file.
 */
export function masterKeySealer(config: Config, log: Logger, { create }: { create: boolean }): Sealer {
  const key = configuredMasterKey(config);
  if (key) return new Sealer(key);
  if (!create) throw new MasterKeyError('SVC_MASTER_KEY is not set and there is no master.key in the data directory');
  return new Sealer(randomBytes(32), { file: masterKeyFile(config), log });
}

export function sha256Hex(data: string | Buffer): string {
  // The one-shot form: half the cost of a Hash object, and every authenticated request hashes its token.
  return hash('sha256', data, 'hex');
}

export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
