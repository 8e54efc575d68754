// Its own module (no database, no other features) so that the mail parse worker can load it.
import { domainToASCII } from 'node:url';
import { normalizeEmail } from '../people/email.js';
import { invalid } from '../platform/errors.js';

/** An address as stored: lower case, international domains in their ASCII (punycode) form. */
export function normalizeAddress(raw: string): string {
  const text = raw.trim();
  if (/[\u0000-\u001f\u007f]/.test(text)) throw invalid('an e-mail address must not hold control characters');
  const at = text.lastIndexOf('@');
  if (at > 0) {
    const domain = domainToASCII(text.slice(at + 1));
    if (domain) return normalizeEmail(`${text.slice(0, at)}@${domain}`);
  }
  return normalizeEmail(text);
}
