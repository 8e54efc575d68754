// The formatted editor, loaded lazily (./RichText.tsx imports it when a conversation opens) so the
// panel's first load stays small. Tiptap core with its starter kit, no framework binding: it mounts
// into a plain element Preact leaves alone. Markdown shortcuts come from the kit's input rules
// (`**bold**`, `*italic*`, `` `code` ``, `- `, `1. `, `> `); Ctrl+B, Ctrl+I, Ctrl+E, Ctrl+Shift+7/8/B
// from its keymaps.
import { Editor } from '@tiptap/core';
import Image from '@tiptap/extension-image';
import { Placeholder } from '@tiptap/extensions';
import { Selection } from '@tiptap/pm/state';
import StarterKit from '@tiptap/starter-kit';
import { textToHtml } from './text';

export type Mark = 'bold' | 'italic' | 'code' | 'link';
export type Block = 'bulletList' | 'orderedList' | 'blockquote';

export interface RichEditor {
  focus(): void;
  /** Focus with the caret after the last character (text typed before the editor loaded continues there). */
  focusEnd(): void;
  /** The html, '' when nothing is written. */
  html(): string;
  isEmpty(): boolean;
  setHtml(html: string): void;
  /** The text of the current paragraph before the caret ('' with a selection). */
  textBeforeCaret(): string;
  /** Replaces the `chars` characters before the caret with `text` (paragraphs at blank lines), or with `html` when given. */
  replaceBeforeCaret(chars: number, text: string, html?: string | null): void;
  toggle(what: Mark | Block): void;
  isActive(what: Mark | Block): boolean;
  /** The link under the caret, '' when none. */
  link(): string;
  /** Links the selection (or the word at the caret) to `href`; '' removes the link. */
  setLink(href: string): void;
  setAttributes(attributes: Record<string, string>): void;
  /** Puts an image at the caret (a pasted or dropped picture, once uploaded). */
  insertImage(src: string, alt: string): void;
  destroy(): void;
}

/** Pictures a mail client shows in place; other files pasted or dropped become attachments. */
const INLINE_TYPES = /^image\/(png|jpe?g|gif|webp)$/;

function pictures(list: FileList | null | undefined): File[] {
  return Array.from(list ?? []).filter((f) => INLINE_TYPES.test(f.type));
}

export function createRichEditor(
  element: HTMLElement,
  opts: {
    html: string;
    placeholder: () => string;
    attributes: Record<string, string>;
    onChange: () => void;
    onSelection: () => void;
    /** True when the key was handled (the editor then ignores it). */
    onKeyDown: (event: KeyboardEvent) => boolean;
    onBlur: () => void;
    /** Pictures pasted or dropped into the text: the caller uploads them and calls insertImage. */
    onPictures: (files: File[]) => void;
  },
): RichEditor {
  const editor = new Editor({
    element,
    // The panel's CSP allows no inline styles: the editor's few rules are in styles/workspace.css.
    injectCSS: false,
    content: opts.html,
    extensions: [
      StarterKit.configure({
        heading: false,
        horizontalRule: false,
        strike: false,
        underline: false,
        link: { openOnClick: false, autolink: true, linkOnPaste: true, defaultProtocol: 'https', protocols: ['mailto', 'tel'] },
      }),
      Placeholder.configure({ placeholder: () => opts.placeholder() }),
      Image.configure({ inline: true, allowBase64: false }),
    ],
    editorProps: {
      attributes: opts.attributes,
      handleKeyDown: (_view, event) => opts.onKeyDown(event),
      // Text copied with a picture of itself (spreadsheet cells) is pasted as text.
      handlePaste: (_view, event) => !event.clipboardData?.types.includes('text/plain') && takePictures(event.clipboardData?.files),
      handleDrop: (view, event) => {
        const files = pictures((event as DragEvent).dataTransfer?.files);
        if (!files.length) return false;
        // The caret goes where the picture was dropped, so it lands there.
        const at = view.posAtCoords({ left: (event as DragEvent).clientX, top: (event as DragEvent).clientY });
        if (at) view.dispatch(view.state.tr.setSelection(Selection.near(view.state.doc.resolve(at.pos))));
        return takePictures((event as DragEvent).dataTransfer?.files);
      },
    },
    onUpdate: () => opts.onChange(),
    onSelectionUpdate: () => opts.onSelection(),
    onBlur: () => opts.onBlur(),
  });

  function takePictures(list: FileList | null | undefined): boolean {
    const files = pictures(list);
    if (!files.length) return false;
    opts.onPictures(files);
    return true;
  }

  return {
    // At once, not a frame later as Tiptap's focus command does: keys typed right after a
    // shortcut (r, n) must land here, not in the page's shortcuts.
    focus: () => editor.view.focus(),
    focusEnd: () => {
      // The last text position: the document's size is past the last paragraph, not inside it.
      editor.view.dispatch(editor.state.tr.setSelection(Selection.atEnd(editor.state.doc)));
      editor.view.focus();
    },
    html: () => (editor.isEmpty ? '' : editor.getHTML()),
    isEmpty: () => editor.isEmpty,
    setHtml: (html) => editor.commands.setContent(html, { emitUpdate: false }),
    textBeforeCaret() {
      const { $from, empty } = editor.state.selection;
      return empty ? $from.parent.textBetween(0, $from.parentOffset, undefined, '\ufffc') : '';
    },
    replaceBeforeCaret(chars, text, html) {
      const at = editor.state.selection.from;
      const single = !/\n/.test(text);
      editor
        .chain()
        .focus()
        .deleteRange({ from: at - chars, to: at })
        // A formatted saved reply keeps its formatting (the editor's schema keeps what it knows).
        .insertContent(html ? html : single ? (text ? { type: 'text', text } : '') : textToHtml(text))
        .run();
    },
    toggle(what) {
      const chain = editor.chain().focus();
      if (what === 'bold') chain.toggleBold();
      else if (what === 'italic') chain.toggleItalic();
      else if (what === 'code') chain.toggleCode();
      else if (what === 'bulletList') chain.toggleBulletList();
      else if (what === 'orderedList') chain.toggleOrderedList();
      else if (what === 'blockquote') chain.toggleBlockquote();
      chain.run();
    },
    isActive: (what) => editor.isActive(what),
    link: () => (editor.getAttributes('link').href as string | undefined) ?? '',
    setLink(href) {
      const chain = editor.chain().focus().extendMarkRange('link');
      if (!href) {
        chain.unsetLink().run();
        return;
      }
      if (editor.state.selection.empty && !editor.isActive('link')) {
        // Nothing chosen: the address itself is the text of the link.
        // …and what is typed next is not part of it.
        chain
          .insertContent({ type: 'text', text: href, marks: [{ type: 'link', attrs: { href } }] })
          .unsetMark('link')
          .run();
        return;
      }
      chain.setLink({ href }).run();
    },
    insertImage: (src, alt) => {
      editor.chain().focus().setImage({ src, alt }).run();
    },
    setAttributes: (attributes) => editor.setOptions({ editorProps: { ...editor.options.editorProps, attributes } }),
    destroy: () => editor.destroy(),
  };
}
