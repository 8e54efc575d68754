// The command palette (Ctrl/Cmd+K) and pickers made from it (the macro picker): a filter box over a
// list of commands; ↑ ↓ choose, Enter runs, Esc closes. A combobox with its listbox, so a screen
// reader hears the chosen command while the focus stays in the box.
import { useMemo, useState } from 'preact/hooks';
import { Dialog } from '../components/Dialog';
import { t } from '../i18n';
import './palette.css';

export type Command = { id: string; label: string; hint?: string; run: () => void };

/** Every word typed appears in the label (any case, any order). */
export function matches(label: string, query: string): boolean {
  const text = label.toLocaleLowerCase();
  return query
    .toLocaleLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => text.includes(w));
}

export function CommandPalette(props: { title: string; placeholder: string; commands: Command[]; empty?: string; onClose: () => void }) {
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const shown = useMemo(() => props.commands.filter((c) => matches(c.label, query)), [props.commands, query]);
  const current = Math.min(active, Math.max(0, shown.length - 1));
  const run = (c: Command | undefined) => {
    if (!c) return;
    props.onClose();
    c.run();
  };
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <div class="palette">
        <input
          class="input palette-input"
          type="text"
          role="combobox"
          aria-label={props.placeholder}
          placeholder={props.placeholder}
          aria-expanded="true"
          aria-controls="palette-list"
          aria-autocomplete="list"
          aria-activedescendant={shown.length ? `palette-${current}` : undefined}
          autocomplete="off"
          data-autofocus
          value={query}
          onInput={(e) => {
            setQuery(e.currentTarget.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              const next = (current + (e.key === 'ArrowDown' ? 1 : -1) + shown.length) % Math.max(1, shown.length);
              setActive(next);
              document.getElementById(`palette-${next}`)?.scrollIntoView({ block: 'nearest' });
            } else if (e.key === 'Enter') {
              e.preventDefault();
              run(shown[current]);
            }
          }}
        />
        <ul id="palette-list" class="palette-list" role="listbox" aria-label={props.title}>
          {shown.map((c, i) => (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox above gives the keyboard path (arrows and Enter)
            <li
              key={c.id}
              id={`palette-${i}`}
              role="option"
              aria-selected={i === current}
              class={i === current ? 'palette-item active' : 'palette-item'}
              onMouseMove={() => setActive(i)}
              onClick={() => run(c)}
            >
              <span>{c.label}</span>
              {c.hint && <span class="muted palette-hint">{c.hint}</span>}
            </li>
          ))}
        </ul>
        {shown.length === 0 && <p class="muted">{props.empty ?? t('palette.empty')}</p>}
        <p class="hint palette-keys">{t('palette.hint')}</p>
      </div>
    </Dialog>
  );
}
