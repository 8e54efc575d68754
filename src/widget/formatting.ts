// Light formatting in chat (issue 34). The team's replies are html from the panel's editor; the
// visitor writes Markdown-ish text. Both reach the widget as html in a small subset (bold, italic,
// links, lists, quotes, code, paragraphs and line breaks), sanitized here and built again from a
// whitelist in the widget (ui/widget/src/rich.tsx), so nothing else can run or show.
//
// What a visitor may type: **bold**, *italic* or _italic_, `code`, lines starting "- " or "* "
// (a list), "1. " (a numbered list), "> " (a quote), and web addresses (http://, https://, www.)
// become links. Everything else is text; a message without any of these stays plain (html null).
import { createRequire } from 'node:module';
import type SanitizeHtml from 'sanitize-html';
import { htmlNestsDeeperThan } from '../mail/html-limits.js';

let sanitizer: typeof SanitizeHtml | undefined;

export const CHAT_TAGS = ['p', 'br', 'strong', 'b', 'em', 'i', 'a', 'ul', 'ol', 'li', 'blockquote', 'code', 'pre'];

/** The chat subset of (already sanitized) message html: other tags keep their text, images and the like go. */
export function chatHtml(html: string | null | undefined): string | null {
  if (!html || htmlNestsDeeperThan(html)) return null;
  const sanitizeHtml = (sanitizer ??= createRequire(import.meta.url)('sanitize-html') as typeof SanitizeHtml);
  const out = sanitizeHtml(html, {
    allowedTags: CHAT_TAGS,
    allowedAttributes: { a: ['href', 'rel', 'target'], ol: ['start'] },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowProtocolRelative: false,
    // Kept whole when discarded: script, style, textarea, option, noscript (sanitize-html's default).
    disallowedTagsMode: 'discard',
    transformTags: {
      a: (tagName, attribs) => ({
        tagName,
        attribs: { ...(attribs.href ? { href: attribs.href } : {}), rel: 'noopener nofollow noreferrer', target: '_blank' },
      }),
    },
    nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'template'],
  });
  return out.trim() ? out : null;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

const URL_PATTERN = /\b(?:https?:\/\/|www\.)[^\s<>"'`]*[^\s<>"'`.,:;!?)\]}*_]/gi;

/** One line's inline formatting: code spans first (nothing inside them is formatted), then links, bold, italic. */
function inline(text: string, used: { any: boolean }): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, i) => {
      if (i % 2 === 1) {
        used.any = true;
        return `<code>${escapeHtml(part.slice(1, -1))}</code>`;
      }
      let out = '';
      let at = 0;
      for (const m of part.matchAll(URL_PATTERN)) {
        out += emphasis(part.slice(at, m.index), used);
        const href = /^www\./i.test(m[0]) ? `https://${m[0]}` : m[0];
        out += `<a href="${escapeHtml(href)}">${escapeHtml(m[0])}</a>`;
        used.any = true;
        at = m.index + m[0].length;
      }
      return out + emphasis(part.slice(at), used);
    })
    .join('');
}

function emphasis(text: string, used: { any: boolean }): string {
  const mark = (tag: string) => (_: string, before: string, inner: string) => {
    used.any = true;
    return `${before}<${tag}>${inner}</${tag}>`;
  };
  return escapeHtml(text)
    .replace(/(^|[^*\w])\*\*(?=\S)([^*]*?\S)\*\*(?![*\w])/g, mark('strong'))
    .replace(/(^|[^*\w])\*(?=\S)([^*]*?\S)\*(?![*\w])/g, mark('em'))
    .replace(/(^|[^_\p{L}\p{N}])_(?=\S)([^_]*?\S)_(?![_\p{L}\p{N}])/gu, mark('em'));
}

type Block = { kind: 'p' | 'ul' | 'ol' | 'quote'; lines: string[] };

const LIST_ITEM = /^\s*[-*]\s+(.*)$/;
const NUMBERED_ITEM = /^\s*\d{1,9}[.)]\s+(.*)$/;
const QUOTED = /^\s*>\s?(.*)$/;

/** The visitor's text as chat html, or null when it has no formatting (it then stays plain text). */
export function visitorTextHtml(text: string): string | null {
  const used = { any: false };
  const blocks: Block[] = [];
  let current: Block | null = null;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    const kind = LIST_ITEM.test(line) ? 'ul' : NUMBERED_ITEM.test(line) ? 'ol' : QUOTED.test(line) ? 'quote' : line.trim() ? 'p' : null;
    if (kind === null) {
      current = null;
      continue;
    }
    const content =
      kind === 'ul' ? LIST_ITEM.exec(line)![1]! : kind === 'ol' ? NUMBERED_ITEM.exec(line)![1]! : kind === 'quote' ? QUOTED.exec(line)![1]! : line;
    if (!current || current.kind !== kind) blocks.push((current = { kind, lines: [] }));
    current.lines.push(content);
  }
  const html = blocks
    .map((b) => {
      if (b.kind === 'p') return `<p>${b.lines.map((l) => inline(l, used)).join('<br>')}</p>`;
      used.any = true;
      if (b.kind === 'quote') return `<blockquote><p>${b.lines.map((l) => inline(l, used)).join('<br>')}</p></blockquote>`;
      return `<${b.kind}>${b.lines.map((l) => `<li>${inline(l, used)}</li>`).join('')}</${b.kind}>`;
    })
    .join('');
  return used.any ? chatHtml(html) : null;
}
