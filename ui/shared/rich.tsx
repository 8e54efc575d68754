// Shared by the widget and the panel (ui/shared: the one place both bundles import from).
// A chat message's text: its html (a small subset the server sanitized: bold, italic, links, lists,
// quotes, code) built again here from a whitelist, never set as innerHTML, so a page can show
// nothing but these elements and text, whatever the html says. Plain messages are their text.
import type { ComponentChildren } from 'preact';

const TAGS = new Set(['p', 'br', 'strong', 'b', 'em', 'i', 'ul', 'ol', 'li', 'blockquote', 'code', 'pre']);
/** Elements whose text is not text for a reader (dropped with their content). */
const DROPPED = new Set(['script', 'style', 'template', 'noscript', 'title', 'textarea', 'select', 'iframe', 'object', 'svg', 'math']);
const SAFE_HREF = /^(https?:|mailto:)/i;
const MAX_DEPTH = 20;

function build(nodes: NodeListOf<ChildNode>, depth: number): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  nodes.forEach((node) => {
    if (node.nodeType === Node.TEXT_NODE) {
      out.push(node.textContent);
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const el = node as Element;
    const tag = el.tagName.toLowerCase();
    if (DROPPED.has(tag)) return;
    const children = depth < MAX_DEPTH ? build(el.childNodes, depth + 1) : [el.textContent];
    if (tag === 'a') {
      const href = el.getAttribute('href')?.trim() ?? '';
      out.push(
        SAFE_HREF.test(href) ? (
          <a href={href} target="_blank" rel="noopener nofollow noreferrer">
            {children}
          </a>
        ) : (
          children
        ),
      );
    } else if (TAGS.has(tag)) {
      const Tag = tag as 'p';
      out.push(<Tag>{children}</Tag>);
    } else out.push(children);
  });
  return out;
}

export function MessageText(props: { body: string; html?: string | null }) {
  if (props.html) {
    // DOMParser documents are inert: nothing in them runs or loads.
    const doc = new DOMParser().parseFromString(props.html, 'text/html');
    return <div class="rich">{build(doc.body.childNodes, 0)}</div>;
  }
  return props.body ? <p>{props.body}</p> : null;
}
