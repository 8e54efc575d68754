// The plain-text part of a formatted reply, made from its (sanitized) HTML: the one stored
// representation of what the member wrote. Faithful rather than pretty: lists keep their `- ` and
// `1. ` markers, links read `text (url)` (only the url when the text is the url), quotes are
// prefixed with `> `, headings keep their case, images show their alt text in brackets (a `cid:`
// or uploaded image has nothing a reader could open). Not wrapped: mail clients wrap plain text.
import { createRequire } from 'node:module';
import type { convert as Convert, FormatCallback, HtmlToTextOptions } from 'html-to-text';
import { htmlNestsDeeperThan, MAX_HTML_DEPTH } from './html-limits.js';

let convert: typeof Convert | undefined;

const image: FormatCallback = (elem, _walk, builder) => {
  const alt = (elem.attribs?.alt ?? '').trim();
  if (alt) builder.addInline(`[${alt}]`);
};

/** Links: `text (url)`; mailto: and tel: without the scheme; the url alone when it is the text. */
const anchor: FormatCallback = (elem, walk, builder) => {
  const href = (elem.attribs?.href ?? '').trim();
  let text = '';
  builder.pushWordTransform((w: string) => {
    text += (text ? ' ' : '') + w;
    return w;
  });
  walk(elem.children, builder);
  builder.popWordTransform();
  if (!href) return;
  const shown = href.replace(/^(mailto|tel):/i, '');
  const same = text.trim() === shown || text.trim() === href || `${text.trim()}/` === href;
  if (!same) builder.addInline(text ? ` (${shown})` : shown, { noWordTransform: true });
};

/** Lists with `- ` and `1. ` at the line start (the built-in one right-aligns numbers after a space). */
const list =
  (ordered: boolean): FormatCallback =>
  (elem, walk, builder) => {
    const nested = elem.parent?.name === 'li';
    let n = Number(elem.attribs?.start ?? '1') || 1;
    const items = (elem.children ?? []).filter((c) => c.type !== 'text' || !/^\s*$/.test(c.data ?? ''));
    if (!items.length) return;
    const prefixes = items.map((c) => (c.name !== 'li' ? '' : ordered ? `${n++}. ` : '- '));
    builder.openList({
      interRowLineBreaks: 1,
      leadingLineBreaks: nested ? 1 : 2,
      maxPrefixLength: Math.max(...prefixes.map((p) => p.length)),
      prefixAlign: 'left',
    });
    items.forEach((node, i) => {
      builder.openListItem({ prefix: prefixes[i] });
      walk([node], builder);
      builder.closeListItem();
    });
    builder.closeList({ trailingLineBreaks: nested ? 1 : 2 });
  };

const heading = { leadingLineBreaks: 2, trailingLineBreaks: 1, uppercase: false };

const OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  limits: { maxDepth: MAX_HTML_DEPTH },
  formatters: { svcImage: image, svcAnchor: anchor, svcUl: list(false), svcOl: list(true) },
  selectors: [
    { selector: 'a', format: 'svcAnchor' },
    { selector: 'img', format: 'svcImage' },
    { selector: 'ul', format: 'svcUl' },
    { selector: 'ol', format: 'svcOl' },
    // Editors wrap each item's text in a paragraph: no blank line between items.
    { selector: 'li > p', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    { selector: 'blockquote', options: { trimEmptyLines: true } },
    { selector: 'h1', options: heading },
    { selector: 'h2', options: heading },
    { selector: 'h3', options: heading },
    { selector: 'h4', options: heading },
    { selector: 'h5', options: heading },
    { selector: 'h6', options: heading },
    { selector: 'table', format: 'dataTable' },
    { selector: 'hr', options: { length: 20 } },
  ],
};

/** The plain text of sanitized HTML; '' when it cannot be read (nesting past the limit). */
export function plainFromHtml(html: string): string {
  if (htmlNestsDeeperThan(html)) return '';
  convert ??= (createRequire(import.meta.url)('html-to-text') as typeof import('html-to-text')).convert;
  const text = convert(html, OPTIONS);
  return text
    .replace(/[^\S\n]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
