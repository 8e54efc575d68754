// Placeholders in saved replies and signatures: `{{contact.first_name}}`, with an optional fallback
// after a bar, `{{contact.first_name|friend}}` (spaces around the key and the bar are ignored).
// Unknown keys are refused when a reply or signature is saved; rendering replaces every known
// placeholder and leaves any other text (a lone `{{`, say) as it is.
//
// A value that is missing renders as the placeholder's fallback, else as its default: "there" for
// the contact's name and first name ("Hi {{contact.first_name}}," → "Hi there,"), nothing for the
// others.

import { invalid } from '../platform/errors.js';

export const PLACEHOLDERS = {
  'contact.name': { describe: 'the contact’s name', missing: 'there' },
  'contact.first_name': { describe: 'the first word of the contact’s name', missing: 'there' },
  'contact.email': { describe: 'the contact’s first e-mail address', missing: '' },
  'member.name': { describe: 'the name of the member who writes', missing: '' },
  'member.first_name': { describe: 'the first word of the writing member’s name', missing: '' },
  'member.email': { describe: 'the e-mail address of the member who writes', missing: '' },
  'inbox.name': { describe: 'the conversation’s inbox', missing: '' },
  'conversation.subject': { describe: 'the conversation’s subject', missing: '' },
} as const;

export type PlaceholderKey = keyof typeof PLACEHOLDERS;
export type PlaceholderValues = Partial<Record<PlaceholderKey, string | null>>;

export const PLACEHOLDER_KEYS = Object.keys(PLACEHOLDERS) as PlaceholderKey[];
export const MAX_FALLBACK_CHARS = 100;

const PATTERN = /\{\{\s*([^{}|]*?)\s*(?:\|\s*([^{}]*?)\s*)?\}\}/g;

function isKey(key: string): key is PlaceholderKey {
  return Object.hasOwn(PLACEHOLDERS, key);
}

/** Problems with the placeholders of a text: unknown keys (as written, e.g. `{{contact.age}}`) and over-long fallbacks. */
export function placeholderProblems(text: string): { unknown: string[]; longFallbacks: string[] } {
  const unknown = new Set<string>();
  const longFallbacks = new Set<string>();
  for (const m of text.matchAll(PATTERN)) {
    if (!isKey(m[1])) unknown.add(m[0]);
    else if ((m[2] ?? '').length > MAX_FALLBACK_CHARS) longFallbacks.add(m[1]);
  }
  return { unknown: [...unknown], longFallbacks: [...longFallbacks] };
}

export function renderPlaceholders(text: string, values: PlaceholderValues): string {
  return text.replace(PATTERN, (whole, key: string, fallback: string | undefined) => {
    if (!isKey(key)) return whole;
    const value = values[key]?.trim();
    if (value) return value;
    return fallback ?? PLACEHOLDERS[key].missing;
  });
}

export function firstWord(name: string | null | undefined): string | null {
  const word = name?.trim().split(/\s+/)[0];
  return word || null;
}

/** Refuses text with unknown placeholders (naming them) or over-long fallbacks. */
export function checkPlaceholders(text: string, field: string): void {
  const { unknown, longFallbacks } = placeholderProblems(text);
  if (unknown.length) {
    throw invalid(
      `unknown placeholder${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} in ${field}; known ones are ${PLACEHOLDER_KEYS.map((k) => `{{${k}}}`).join(', ')}`,
      {
        issues: [{ path: [field], message: `unknown placeholders: ${unknown.join(', ')}` }],
        unknown_placeholders: unknown,
      },
    );
  }
  if (longFallbacks.length) {
    throw invalid(`the fallback of ${longFallbacks.map((k) => `{{${k}}}`).join(', ')} in ${field} is longer than ${MAX_FALLBACK_CHARS} characters`, {
      issues: [{ path: [field], message: `fallbacks are at most ${MAX_FALLBACK_CHARS} characters` }],
    });
  }
}
