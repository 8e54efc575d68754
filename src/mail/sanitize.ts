// HTML from mail (and from API callers) is sanitized before it is stored, so nothing served later
// carries scripts, event handlers, forms, frames or style sheets. Images embedded in the mail
// (`cid:` links) point at the stored attachment instead.
import { createRequire } from 'node:module';
import type SanitizeHtml from 'sanitize-html';
import { attachmentUrl } from '../conversations/format.js';
import { htmlNestsDeeperThan, MAX_HTML_CHARS } from './html-limits.js';

const SAFE_STYLE = {
  color: [/^[#a-z0-9(),.\s%]+$/i],
  'background-color': [/^[#a-z0-9(),.\s%]+$/i],
  'text-align': [/^(left|right|center|justify)$/],
  'font-weight': [/^(normal|bold|bolder|lighter|\d{3})$/],
  'font-style': [/^(normal|italic|oblique)$/],
  'text-decoration': [/^[a-z\s-]+$/],
  'font-size': [/^\d{1,3}(\.\d+)?(px|pt|em|rem|%)$/],
};

/**
 * Returns sanitized HTML, or null when nothing is left or the HTML nests too deep to read (see
 * html-limits.ts; the text and the original stay). `cids` maps Content-IDs to attachment ids.
 */
let sanitizer: typeof SanitizeHtml | undefined;

export function sanitizeMailHtml(html: string, cids: ReadonlyMap<string, string> = new Map()): string | null {
  // Required on first use: a server that never stores HTML does not carry the parser.
  const sanitizeHtml = (sanitizer ??= createRequire(import.meta.url)('sanitize-html') as typeof SanitizeHtml);
  const input = html.length > MAX_HTML_CHARS ? html.slice(0, MAX_HTML_CHARS) : html;
  if (htmlNestsDeeperThan(input)) return null;
  const out = sanitizeHtml(input, {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'font', 'center', 'del', 'ins', 'big', 'small'],
    disallowedTagsMode: 'discard',
    allowedAttributes: {
      a: ['href', 'title', 'rel', 'target'],
      img: ['src', 'alt', 'title', 'width', 'height'],
      td: ['colspan', 'rowspan', 'align', 'valign', 'width'],
      th: ['colspan', 'rowspan', 'align', 'valign', 'width'],
      table: ['width', 'border', 'cellpadding', 'cellspacing', 'align'],
      font: ['color', 'size'],
      '*': ['style', 'dir', 'lang'],
    },
    allowedStyles: { '*': SAFE_STYLE },
    allowedSchemes: ['http', 'https', 'mailto', 'tel'],
    allowedSchemesByTag: { img: ['http', 'https'] },
    allowProtocolRelative: false,
    transformTags: {
      a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'noopener noreferrer nofollow', target: '_blank' } }),
      img: (tagName, attribs) => {
        const src = attribs.src ?? '';
        if (/^cid:/i.test(src)) {
          const id = cids.get(decodeURIComponent(src.slice(4)).replace(/^<|>$/g, ''));
          return { tagName, attribs: { ...attribs, src: id ? attachmentUrl(id) : '' } };
        }
        return { tagName, attribs };
      },
    },
    exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
  });
  return out.trim() ? out : null;
}
