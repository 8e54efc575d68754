// An e-mail address as stored. Its own module (no database, no other features) so that the
// mail parse worker can load it.
import { invalid } from '../platform/errors.js';

const EMAIL = /^[^\s@<>(),;:"[\]\\]+@[A-Za-z0-9.-]+\.[A-Za-z0-9-]{2,}$/;

export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) throw invalid(`not an e-mail address: ${JSON.stringify(raw.slice(0, 100))}`);
  return email;
}
