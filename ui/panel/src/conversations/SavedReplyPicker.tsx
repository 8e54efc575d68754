// The `#` picker of the composer: typing `#` at the start of a word lists saved replies whose name
// or body matches what follows; arrows move, Enter inserts the reply rendered for the
// conversation (placeholders filled in by the server), Esc closes. The text box stays focused and
// names the active option of the listbox (aria-activedescendant); a live region says how many
// replies match.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import { t } from '../i18n';

type SavedReply = Schemas['SavedReply'];
export const PICKER_ID = 'saved-reply-picker';
const optionId = (id: string) => `saved-reply-option-${id}`;

/** The `#word` the caret is at the end of, if any: where it starts and what follows the `#`. */
export function hashQueryAt(text: string, caret: number): { start: number; query: string } | null {
  const m = /(^|\s)#([^\s#]{0,60})$/.exec(text.slice(0, caret));
  return m ? { start: caret - m[2].length - 1, query: m[2] } : null;
}

export interface PickerState {
  replies: SavedReply[];
  active: number;
  loading: boolean;
}

/** Loads the matching replies while `query` is not null (debounced; the latest answer wins). */
export function useSavedReplies(query: string | null): [PickerState, (active: number) => void] {
  const [state, setState] = useState<PickerState>({ replies: [], active: 0, loading: false });
  const latest = useRef(0);
  useEffect(() => {
    if (query === null) {
      setState({ replies: [], active: 0, loading: false });
      return;
    }
    const ticket = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    const timer = setTimeout(() => {
      must(api.GET('/v1/saved-replies', { params: { query: { q: query || undefined, limit: 8 } } })).then(
        (page) => ticket === latest.current && setState({ replies: page.data, active: 0, loading: false }),
        () => ticket === latest.current && setState({ replies: [], active: 0, loading: false }),
      );
    }, 120);
    return () => clearTimeout(timer);
  }, [query]);
  return [state, (active) => setState((s) => ({ ...s, active }))];
}

/**
 * Attributes for the text box. The combobox role is for one-line inputs (a textarea may only be a
 * textbox), so the reply box stays a multi-line textbox that owns the listbox the way a combobox
 * does: aria-autocomplete, aria-controls and aria-activedescendant (plus the live region below).
 */
export function comboboxProps(open: boolean, state: PickerState) {
  const active = open ? state.replies[state.active] : undefined;
  return {
    'aria-autocomplete': 'list' as const,
    'aria-haspopup': 'listbox' as const,
    'aria-controls': PICKER_ID,
    'aria-activedescendant': active ? optionId(active.id) : undefined,
  };
}

export function SavedReplyPicker(props: {
  open: boolean;
  query: string;
  state: PickerState;
  onChoose: (reply: SavedReply) => void;
  onHover: (index: number) => void;
}) {
  const { open, state } = props;
  const status = !open
    ? ''
    : state.loading && !state.replies.length
      ? t('picker.loading')
      : state.replies.length
        ? t('picker.count', { n: String(state.replies.length) })
        : t('picker.none', { q: props.query });
  return (
    <>
      <ul id={PICKER_ID} role="listbox" aria-label={t('picker.label')} class="picker" hidden={!open || state.replies.length === 0}>
        {open &&
          state.replies.map((r, i) => (
            <li
              key={r.id}
              id={optionId(r.id)}
              role="option"
              aria-selected={i === state.active}
              class="picker-option"
              // Keep the focus in the text box: choose on mousedown.
              onMouseDown={(e) => {
                e.preventDefault();
                props.onChoose(r);
              }}
              onMouseEnter={() => props.onHover(i)}
            >
              <span class="picker-name">
                {`#${r.name}`}
                {r.scope === 'personal' && <span class="picker-scope">{t('replies.personal')}</span>}
              </span>
              <span class="picker-body">{r.body}</span>
            </li>
          ))}
      </ul>
      <p class="visually-hidden" role="status" aria-live="polite">
        {status}
      </p>
      {open && !state.loading && state.replies.length === 0 && (
        <p class="picker picker-empty" aria-hidden="true">
          {status}
        </p>
      )}
    </>
  );
}
