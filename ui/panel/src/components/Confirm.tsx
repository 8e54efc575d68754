// A destructive action's confirmation: names what goes; with `typed`, the exact text must be typed.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { t } from '../i18n';
import { Dialog } from './Dialog';

export function Confirm(props: {
  title: string;
  lead: string;
  /** Without an action (and onConfirm) the dialog only offers Cancel: a step that picks something first. */
  action?: string;
  typed?: { label: string; value: string };
  onConfirm?: () => Promise<void> | void;
  onClose: () => void;
  children?: ComponentChildren;
}) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const ok = !props.typed || text.trim() === props.typed.value;
  return (
    <Dialog title={props.title} onClose={props.onClose} closeButton={false}>
      <p>{props.lead}</p>
      {props.children}
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!ok || !props.onConfirm) return;
          setBusy(true);
          try {
            await props.onConfirm();
          } finally {
            setBusy(false);
          }
        }}
      >
        {props.typed && (
          <div class="field">
            <label for="confirm-text">{props.typed.label}</label>
            <input id="confirm-text" data-autofocus class="input" autoComplete="off" value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </div>
        )}
        <div style={{ display: 'flex', gap: 'var(--space-2)' }}>
          {props.action && (
            <button class="btn btn-primary btn-danger-fill" type="submit" disabled={!ok || busy}>
              {props.action}
            </button>
          )}
          {/* Enter on a destructive step must not destroy: the focus starts on Cancel (or on the field to type). */}
          <button class="btn" type="button" onClick={props.onClose} data-autofocus={props.action && !props.typed ? true : undefined}>
            {t('settings.cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
