// Plain text as editor html: paragraphs at blank lines, line breaks within. Small and eager (the
// editor itself is lazy): the fallback text box and old plain-text drafts use it before it loads.
const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

export function textToHtml(text: string): string {
  if (!text.trim()) return '';
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
    .join('');
}
