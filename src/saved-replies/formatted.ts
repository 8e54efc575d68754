// Formatted saved replies and signatures, stored as replies are (src/conversations/messages.ts): the
// sanitized html the editor made is the one representation, and the plain text (`body`, for search,
// plain-text mail parts and API callers that read text) is made from it. Without html, the text
// alone is kept and the html is null.
import { plainFromHtml } from '../mail/plain-text.js';
import { sanitizeMailHtml } from '../mail/sanitize.js';
import { PLACEHOLDERS, type PlaceholderValues, renderPlaceholders } from './placeholders.js';

export interface Formatted {
  body: string;
  html: string | null;
}

/** `html` (when it has any content) wins over `body`, as on the reply routes. */
export function formattedInput(input: { body?: string; html?: string }): Formatted {
  if (input.html === undefined || !input.html.trim()) return { body: input.body ?? '', html: null };
  const html = sanitizeMailHtml(input.html);
  if (html === null) return { body: '', html: null };
  const body = plainFromHtml(html);
  // Markup without text (or nesting past the limit, so none can be read) is empty: the caller
  // refuses it or, for a signature, removes it.
  if (!body.trim()) return { body: '', html: null };
  return { body, html };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * Placeholders filled into html: values are escaped (a contact named `<b>` stays text); a fallback
 * is written in the html already, so it stays as the sanitizer left it.
 */
export function renderHtmlPlaceholders(html: string, values: PlaceholderValues): string {
  const escaped: PlaceholderValues = {};
  for (const key of Object.keys(PLACEHOLDERS) as (keyof typeof PLACEHOLDERS)[]) {
    const value = values[key];
    escaped[key] = value === null || value === undefined ? value : escapeHtml(value);
  }
  return renderPlaceholders(html, escaped);
}
