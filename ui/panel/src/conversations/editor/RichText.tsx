// The composer's formatted text box: a toolbar and the lazily loaded editor (./tiptap.ts). Until the
// editor has loaded, a plain text box with the same id takes the keys; what was typed there moves
// into the editor (and the focus with it) as soon as it is ready, so nothing typed is lost.
import { forwardRef } from 'preact/compat';
import { useEffect, useImperativeHandle, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { t } from '../../i18n';
import { textToHtml } from './text';
import type { Block, Mark, RichEditor } from './tiptap';

export interface RichTextHandle {
  focus(): void;
  /** The html written, '' when empty. */
  html(): string;
  setHtml(html: string): void;
  textBeforeCaret(): string;
  replaceBeforeCaret(chars: number, text: string, html?: string | null): void;
  insertImage(src: string, alt: string): void;
}

interface Props {
  id: string;
  initialHtml: string;
  placeholder: string;
  /** ARIA attributes of the text box (combobox props of the saved-reply picker, description). */
  attributes: Record<string, string | undefined>;
  onChange: (html: string) => void;
  onCaret: () => void;
  /** True when the key was handled (the editor then ignores it). */
  onKeyDown: (event: KeyboardEvent) => boolean;
  onBlur: () => void;
  /** Pictures pasted or dropped into the text, to upload and put in place with insertImage. */
  onPictures?: (files: File[]) => void;
}

// A numbered-list mark drawn, not written: "1." as text is not part of the button's name (axe).
const NUMBERS = (
  <svg aria-hidden="true" width="16" height="14" viewBox="0 0 16 14" fill="currentColor">
    <rect x="0" y="1" width="2" height="4" />
    <rect x="0" y="8" width="3" height="1.5" />
    <rect x="1.5" y="9.5" width="1.5" height="1.5" />
    <rect x="0" y="11" width="3" height="1.5" />
    <rect x="5" y="2" width="11" height="2" />
    <rect x="5" y="9.5" width="11" height="2" />
  </svg>
);

// Two chain links, drawn (an emoji may have no font on the member's machine).
const LINK = (
  <svg aria-hidden="true" width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round">
    <path d="M6.5 9.5l3-3" />
    <path d="M7 4.5l1-1a2.5 2.5 0 013.5 3.5l-1 1" />
    <path d="M9 11.5l-1 1a2.5 2.5 0 01-3.5-3.5l1-1" />
  </svg>
);

const TOOLS: { what: Mark | Block; label: string; keys: string; icon: string | preact.JSX.Element }[] = [
  { what: 'bold', label: 'composer.bold', keys: 'Ctrl+B', icon: 'B' },
  { what: 'italic', label: 'composer.italic', keys: 'Ctrl+I', icon: 'I' },
  { what: 'link', label: 'composer.link', keys: 'Ctrl+K', icon: LINK },
  { what: 'bulletList', label: 'composer.bullets', keys: 'Ctrl+Shift+8', icon: '•' },
  { what: 'orderedList', label: 'composer.numbers', keys: 'Ctrl+Shift+7', icon: NUMBERS },
  { what: 'blockquote', label: 'composer.quote', keys: 'Ctrl+Shift+B', icon: '❝' },
  { what: 'code', label: 'composer.code', keys: 'Ctrl+E', icon: '</>' },
];

const clean = (attributes: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(attributes).filter((e): e is [string, string] => e[1] !== undefined));

export const RichText = forwardRef<RichTextHandle, Props>(function RichText(props, ref) {
  const mount = useRef<HTMLDivElement>(null);
  const fallback = useRef<HTMLTextAreaElement>(null);
  const handover = useRef<{ typed: boolean; hadFocus: boolean } | null>(null);
  const editor = useRef<RichEditor | null>(null);
  const latest = useRef(props);
  latest.current = props;
  const [ready, setReady] = useState(false);
  /** Html given before the editor loaded (a draft from the server): the editor starts with it. */
  const pending = useRef<string | null>(null);
  const [, setTick] = useState(0);
  const [linkOpen, setLinkOpen] = useState(false);
  const [activeTool, setActiveTool] = useState(0);
  const [linkHref, setLinkHref] = useState('');
  const attributes = (p: Props) => clean({ id: p.id, role: 'textbox', 'aria-multiline': 'true', 'aria-placeholder': p.placeholder, ...p.attributes });

  useEffect(() => {
    let gone = false;
    void import('./tiptap').then(({ createRichEditor }) => {
      if (gone || !mount.current) return;
      const typed = fallback.current?.value ?? '';
      const hadFocus = document.activeElement === fallback.current;
      const rich = createRichEditor(mount.current, {
        html: pending.current ?? (typed ? textToHtml(typed) : latest.current.initialHtml),
        placeholder: () => latest.current.placeholder,
        attributes: attributes(latest.current),
        onChange: () => {
          latest.current.onChange(rich.html());
          setTick((n) => n + 1);
        },
        onSelection: () => {
          latest.current.onCaret();
          setTick((n) => n + 1);
        },
        onKeyDown: (e) => {
          if (e.key === 'k' && (e.ctrlKey || e.metaKey) && !e.shiftKey) {
            e.preventDefault();
            openLink();
            return true;
          }
          return latest.current.onKeyDown(e);
        },
        onBlur: () => latest.current.onBlur(),
        onPictures: (files) => latest.current.onPictures?.(files),
      });
      editor.current = rich;
      handover.current = { typed: typed !== '', hadFocus };
      setReady(true);
    });
    return () => {
      gone = true;
      editor.current?.destroy();
      editor.current = null;
    };
  }, []);

  // Once the editor is shown (it cannot take the focus while hidden), before the next key: what was
  // typed in the stand-in goes on at its end, and the composer sees it (a "#" opens the picker).
  useLayoutEffect(() => {
    const rich = editor.current;
    const h = handover.current;
    if (!ready || !rich || !h) return;
    handover.current = null;
    if (h.typed) {
      if (h.hadFocus) rich.focusEnd();
      latest.current.onChange(rich.html());
      latest.current.onCaret();
    } else if (h.hadFocus) rich.focus();
  }, [ready]);

  useEffect(() => {
    editor.current?.setAttributes(attributes(props));
  }, [ready, props.id, props.placeholder, ...Object.values(props.attributes)]);

  useImperativeHandle(
    ref,
    () => ({
      focus: () => (editor.current ? editor.current.focus() : fallback.current?.focus()),
      html: () => (editor.current ? editor.current.html() : textToHtml(fallback.current?.value ?? '')),
      setHtml(html) {
        if (editor.current) editor.current.setHtml(html);
        else {
          pending.current = html;
          if (fallback.current) fallback.current.value = new DOMParser().parseFromString(html, 'text/html').body.textContent ?? '';
        }
      },
      textBeforeCaret() {
        if (editor.current) return editor.current.textBeforeCaret();
        const el = fallback.current;
        return el && el.selectionStart === el.selectionEnd ? el.value.slice(0, el.selectionStart) : '';
      },
      replaceBeforeCaret(chars, text, html) {
        editor.current?.replaceBeforeCaret(chars, text, html);
      },
      insertImage(src, alt) {
        editor.current?.insertImage(src, alt);
      },
    }),
    // Made once: its methods read refs. Remade on every render, the handle would be unset while the
    // layout effects of a render run, and the handover above would find no text box.
    [],
  );

  function openLink() {
    setLinkHref(editor.current?.link() ?? '');
    setLinkOpen(true);
  }

  function applyLink(href: string) {
    const value = href.trim();
    setLinkOpen(false);
    editor.current?.setLink(value && !/^(https?:|mailto:|tel:)/i.test(value) ? `https://${value}` : value);
  }

  return (
    <div class="rich-text">
      {/* One Tab stop, arrows between the tools (the ARIA toolbar pattern). */}
      <div
        class="rich-toolbar"
        role="toolbar"
        aria-label={t('composer.formatting')}
        aria-controls={props.id}
        onKeyDown={(e) => {
          const keys: Record<string, (i: number) => number> = {
            ArrowRight: (i) => (i + 1) % TOOLS.length,
            ArrowLeft: (i) => (i - 1 + TOOLS.length) % TOOLS.length,
            Home: () => 0,
            End: () => TOOLS.length - 1,
          };
          const move = keys[e.key];
          if (!move) return;
          e.preventDefault();
          const next = move(activeTool);
          setActiveTool(next);
          (e.currentTarget.children[next] as HTMLElement | undefined)?.focus();
        }}
      >
        {TOOLS.map((tool, i) => (
          <button
            key={tool.what}
            type="button"
            tabIndex={i === activeTool ? 0 : -1}
            onFocus={() => setActiveTool(i)}
            class={`btn btn-ghost rich-tool rich-${tool.what}`}
            disabled={!ready}
            aria-pressed={ready && editor.current ? editor.current.isActive(tool.what) : false}
            aria-label={t(tool.label as 'composer.bold')}
            title={`${t(tool.label as 'composer.bold')} (${tool.keys})`}
            // Keep the editor's selection: the button acts on it.
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => (tool.what === 'link' ? openLink() : editor.current?.toggle(tool.what))}
          >
            <span aria-hidden="true">{tool.icon}</span>
          </button>
        ))}
      </div>
      {linkOpen && (
        <form
          class="rich-link"
          onSubmit={(e) => {
            e.preventDefault();
            e.stopPropagation();
            applyLink(linkHref);
          }}
        >
          <label class="visually-hidden" for={`${props.id}-link`}>
            {t('composer.link_address')}
          </label>
          <input
            id={`${props.id}-link`}
            class="input"
            type="text"
            inputMode="url"
            placeholder="https://"
            value={linkHref}
            ref={(el) => el?.focus()}
            onInput={(e) => setLinkHref(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                e.preventDefault();
                e.stopPropagation();
                setLinkOpen(false);
                editor.current?.focus();
              }
            }}
          />
          <button class="btn" type="submit">
            {t('composer.link_apply')}
          </button>
          {linkHref && (
            <button class="btn btn-ghost" type="button" onClick={() => applyLink('')}>
              {t('composer.link_remove')}
            </button>
          )}
        </form>
      )}
      {!ready && (
        <textarea
          ref={fallback}
          class="textarea"
          rows={4}
          {...attributes(props)}
          placeholder={props.placeholder}
          onInput={(e) => {
            pending.current = null;
            props.onChange(textToHtml(e.currentTarget.value));
          }}
          onKeyDown={(e) => props.onKeyDown(e)}
        />
      )}
      <div ref={mount} class="rich-mount" hidden={!ready} />
    </div>
  );
});
