// Running macros on the open conversation: the conversation's Macros menu (a menu button: ↑ ↓ Home
// End move, Esc closes) and the macro picker that Shift+M opens from anywhere on the conversation.
import { useEffect, useRef, useState } from 'preact/hooks';
import { t } from '../i18n';
import { CommandPalette } from '../palette';
import { loadMacros, macros, runMacro, runMacroOn } from './macros';
import type { Macro } from './model';

const isTyping = (el: EventTarget | null) =>
  el instanceof HTMLElement && (el.isContentEditable || el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT');

export function MacroMenu(props: { conversationId: string }) {
  const [open, setOpen] = useState(false);
  const [picking, setPicking] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLUListElement>(null);
  const items = () => [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'M' || e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      if (document.querySelector('[role="dialog"]')) return;
      e.preventDefault();
      void loadMacros().catch(() => {});
      setPicking(true);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    if (!open) return;
    requestAnimationFrame(() => items()[0]?.focus());
    const away = (e: Event) => {
      if (!menu.current?.contains(e.target as Node) && e.target !== button.current) setOpen(false);
    };
    document.addEventListener('pointerdown', away);
    return () => document.removeEventListener('pointerdown', away);
  }, [open, macros.value]);

  const close = () => {
    setOpen(false);
    button.current?.focus();
  };
  const run = (m: Macro) => {
    close();
    void runMacro(m, props.conversationId);
  };

  return (
    <div class="macro-menu">
      <button
        ref={button}
        class="btn"
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls="macro-menu-list"
        title={`${t('macro.menu_label')} (Shift+M)`}
        onClick={() => {
          if (!open) void loadMacros().catch(() => {});
          setOpen(!open);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' && !open) {
            e.preventDefault();
            void loadMacros().catch(() => {});
            setOpen(true);
          }
        }}
      >
        {t('macro.menu')} <span class="chevron" aria-hidden="true" />
      </button>
      {open && (
        <ul
          ref={menu}
          id="macro-menu-list"
          class="menu"
          role="menu"
          aria-label={t('macro.menu_label')}
          onKeyDown={(e) => {
            const list = items();
            const i = list.indexOf(document.activeElement as HTMLElement);
            const to =
              e.key === 'ArrowDown'
                ? (i + 1) % list.length
                : e.key === 'ArrowUp'
                  ? (i - 1 + list.length) % list.length
                  : e.key === 'Home'
                    ? 0
                    : e.key === 'End'
                      ? list.length - 1
                      : -2;
            if (to >= 0) {
              e.preventDefault();
              list[to]?.focus();
            } else if (e.key === 'Escape') {
              e.preventDefault();
              e.stopPropagation();
              close();
            } else if (e.key === 'Tab') setOpen(false);
          }}
        >
          {macros.value === null ? (
            <li role="none" class="menu-note muted">
              {t('settings.loading')}
            </li>
          ) : macros.value.length === 0 ? (
            <li role="none" class="menu-note muted">
              {t('macro.none')}
            </li>
          ) : (
            macros.value.map((m) => (
              <li key={m.id} role="none">
                <button type="button" role="menuitem" tabIndex={-1} class="menu-item" onClick={() => run(m)}>
                  {m.name}
                </button>
              </li>
            ))
          )}
          <li role="none">
            <a role="menuitem" tabIndex={-1} class="menu-item menu-link" href="/settings/macros">
              {t('macro.manage')}
            </a>
          </li>
        </ul>
      )}
      {picking && <MacroPicker conversationIds={[props.conversationId]} onClose={() => setPicking(false)} />}
    </div>
  );
}

/** The macro picker: the palette over the member's macros, running the chosen one on the conversations. */
export function MacroPicker(props: { conversationIds: string[]; onClose: () => void; onRan?: (ids: string[]) => void }) {
  const list = macros.value ?? [];
  const ids = props.conversationIds;
  const run = async (m: Macro) => {
    const done = ids.length === 1 ? ((await runMacro(m, ids[0])) ? ids : []) : await runMacroOn(m, ids);
    props.onRan?.(done);
  };
  return (
    <CommandPalette
      title={ids.length > 1 ? `${t('macro.picker')} · ${t('bulk.selected', { count: ids.length })}` : t('macro.picker')}
      placeholder={t('macro.picker_filter')}
      empty={macros.value === null ? t('settings.loading') : t('macro.none')}
      commands={list.map((m) => ({ id: m.id, label: m.name, run: () => void run(m) }))}
      onClose={props.onClose}
    />
  );
}

/** The list's bulk bar: run a macro on the selected conversations. */
export function MacroBulkButton(props: { ids: string[]; disabled?: boolean; onRan: (ids: string[]) => void }) {
  const [picking, setPicking] = useState(false);
  return (
    <>
      <button
        class="btn"
        type="button"
        aria-haspopup="dialog"
        disabled={props.disabled}
        onClick={() => {
          void loadMacros().catch(() => {});
          setPicking(true);
        }}
      >
        {t('macro.bulk')}
      </button>
      {picking && <MacroPicker conversationIds={props.ids} onClose={() => setPicking(false)} onRan={props.onRan} />}
    </>
  );
}

/** "Run macro: …" commands for the palette, on the open conversation. */
export function macroCommands(conversationId: string) {
  return (macros.value ?? []).map((m) => ({
    id: `macro-${m.id}`,
    label: t('macro.run_named', { name: m.name }),
    run: () => void runMacro(m, conversationId),
  }));
}
