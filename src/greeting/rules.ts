// The rules that decide who may get an automatic mail from svc (the greeting, rating requests),
// kept apart from the services so that the event reactions can use them without importing a
// service that records events.
import { DAY } from '../platform/clock.js';

export const GREETING_LOCALES = ['en', 'tr'] as const;
export type GreetingLocale = (typeof GREETING_LOCALES)[number];

/** A contact is greeted at most once in this time, whichever inbox or conversation. */
export const GREETING_INTERVAL_MS = DAY;

const NOREPLY_LOCAL = /^(no[-_.]?reply|do[-_.]?not[-_.]?reply|no[-_.]?response|mailer[-_.]?daemon|postmaster|bounces?|majordomo|listserv|lists?)$/;

/**
 * Addresses that must never get an automatic answer: noreply-style senders and list or bounce
 * addresses (`owner-…`, `…-request`, `…-bounces`, `…-owner`); a `+tag` is ignored.
 */
export function isNoReplyAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  const local = (at < 0 ? address : address.slice(0, at)).toLowerCase().replace(/\+.*$/, '');
  if (NOREPLY_LOCAL.test(local)) return true;
  if (/no[-_.]?reply/.test(local)) return true;
  return /^owner-/.test(local) || /-(request|bounces?|owner|unsubscribe)$/.test(local);
}

/** The language of an automatic mail to a customer: the contact's `locale` attribute, else the inbox's. */
export function customerLocale(inboxLocale: string, contactAttributes: string | undefined): GreetingLocale {
  let contactLocale: unknown;
  try {
    contactLocale = contactAttributes ? (JSON.parse(contactAttributes) as Record<string, unknown>).locale : undefined;
  } catch {
    contactLocale = undefined;
  }
  for (const tag of [contactLocale, inboxLocale]) {
    if (typeof tag !== 'string') continue;
    const primary = tag.toLowerCase().split(/[-_]/)[0];
    if ((GREETING_LOCALES as readonly string[]).includes(primary)) return primary as GreetingLocale;
  }
  return 'en';
}
