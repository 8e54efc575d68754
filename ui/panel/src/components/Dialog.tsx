// A modal dialog: focus moves in and stays in; Esc closes; focus returns where it was. It is rendered
// at the end of <body>, so the page it opens from (the settings column's width and heading rules)
// cannot size or style it.
import type { ComponentChildren } from 'preact';
import { createPortal } from 'preact/compat';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { t } from '../i18n';

export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** False when the content has its own way to dismiss (a confirmation's Cancel). */
  closeButton?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  // A layout effect: the focus is inside before the dialog is first painted (an effect runs after
  // the paint, so a key pressed at once still went to the page behind).
  useLayoutEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const focusables = () => [
      ...(ref.current?.querySelectorAll<HTMLElement>('button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])') ?? []),
    ];
    // The content may name where the focus starts (data-autofocus); otherwise the first control.
    (ref.current?.querySelector<HTMLElement>('[data-autofocus]') ?? focusables()[0])?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        props.onClose();
      }
      if (e.key === 'Tab') {
        const items = focusables();
        if (!items.length) return;
        const first = items[0];
        const last = items[items.length - 1];
        if (e.shiftKey && document.activeElement === first) {
          e.preventDefault();
          last.focus();
        } else if (!e.shiftKey && document.activeElement === last) {
          e.preventDefault();
          first.focus();
        }
      }
    };
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('keydown', onKey, true);
      before?.focus();
    };
  }, []);
  return createPortal(
    <div class="dialog-backdrop" onClick={(e) => e.target === e.currentTarget && props.onClose()}>
      <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="dialog-title" ref={ref}>
        <h2 id="dialog-title">{props.title}</h2>
        {props.children}
        {props.closeButton !== false && (
          <p>
            <button class="btn" type="button" onClick={props.onClose}>
              {t('common.close')}
            </button>
          </p>
        )}
      </div>
    </div>,
    document.body,
  );
}
