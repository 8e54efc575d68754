// Bounds on the HTML that svc reads (sanitizing a body, taking its text). htmlparser2, under both
// sanitize-html and html-to-text, keeps its open elements in an array it shifts at the front, so a
// document that nests n elements costs it O(n²): 200,000 nested <div>s (2 MB, one mail) take ~27 s
// of one thread. HTML that nests deeper than any real mail is therefore not read at all.

/** HTML longer than this is cut before it is read. */
export const MAX_HTML_CHARS = 2 * 1024 * 1024;
/** The deepest nesting of elements read (as mailparser bounds its own reading of HTML). */
export const MAX_HTML_DEPTH = 1000;

const VOID_ELEMENTS = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
/** Elements whose content the parser reads as text up to their end tag. */
const RAW_TEXT_ELEMENTS = new Set(['script', 'style', 'title', 'textarea', 'xmp']);
/** What an opening tag closes when it is the innermost open element (the parser's implied ends). */
const P = ['p'];
const FORM = ['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'];
const IMPLIED_ENDS = new Map<string, readonly string[]>([
  ['tr', ['tr', 'th', 'td']],
  ['th', ['th']],
  ['td', ['thead', 'th', 'td']],
  ['body', ['head', 'link', 'script']],
  ['li', ['li']],
  ['option', ['option']],
  ['optgroup', ['optgroup', 'option']],
  ['dd', ['dd', 'dt']],
  ['dt', ['dd', 'dt']],
  ['rt', ['rt', 'rp']],
  ['rp', ['rt', 'rp']],
  ['tbody', ['thead', 'tbody']],
  ['tfoot', ['thead', 'tbody']],
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((t) => [t, FORM] as const),
  ...[
    'p',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((t) => [t, P] as const),
]);
/** An end tag closes a matching element at most this far down (a stray end tag is skipped). */
const END_TAG_REACH = 64;

function isNameStart(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

/**
 * Whether the HTML nests elements deeper than `max` as an HTML parser would count them: start and
 * end tags, void elements, implied ends, raw-text elements and comments. One pass, linear in the
 * length; where it is unsure it counts deeper, never shallower.
 */
export function htmlNestsDeeperThan(html: string, max = MAX_HTML_DEPTH): boolean {
  const lower = html.toLowerCase();
  const open: string[] = [];
  let i = lower.indexOf('<');
  while (i !== -1 && i < lower.length - 1) {
    const next = lower.charCodeAt(i + 1);
    if (next === 33 /* ! */ || next === 63 /* ? */) {
      const comment = lower.startsWith('<!--', i);
      const end = comment ? lower.indexOf('-->', i + 4) : lower.indexOf('>', i + 2);
      if (end === -1) return false;
      i = lower.indexOf('<', end + 1);
      continue;
    }
    const closing = next === 47; /* / */
    const nameAt = closing ? i + 2 : i + 1;
    if (!isNameStart(lower.charCodeAt(nameAt))) {
      i = lower.indexOf('<', i + 1);
      continue;
    }
    let nameEnd = nameAt + 1;
    while (nameEnd < lower.length && !' \t\n\r\f/>'.includes(lower[nameEnd])) nameEnd++;
    const name = lower.slice(nameAt, nameEnd);
    const tagEnd = lower.indexOf('>', nameEnd);
    if (tagEnd === -1) return false;
    if (closing) {
      const from = open.length - 1;
      for (let k = from; k >= 0 && k > from - END_TAG_REACH; k--) {
        if (open[k] === name) {
          open.length = k;
          break;
        }
      }
      i = lower.indexOf('<', tagEnd + 1);
      continue;
    }
    const ends = IMPLIED_ENDS.get(name);
    if (ends) while (open.length > 0 && ends.includes(open[open.length - 1])) open.pop();
    if (!VOID_ELEMENTS.has(name)) {
      open.push(name);
      if (open.length > max) return true;
    }
    if (RAW_TEXT_ELEMENTS.has(name)) {
      const end = lower.indexOf(`</${name}`, tagEnd + 1);
      if (end === -1) return false;
      i = end;
      continue;
    }
    i = lower.indexOf('<', tagEnd + 1);
  }
  return false;
}
