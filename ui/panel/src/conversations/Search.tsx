// The search box above the list: "/" focuses it, Esc clears it; results replace the list.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { conversationTitle, relativeTime, t } from '../i18n';
import { isTyping } from './typing';
import { type ListFilter, listUrl } from './views';

type Result = { conversation: Schemas['ConversationListItem']; message_id: string; snippet: string };

export function SearchBox(props: { value: string; onChange: (q: string) => void }) {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === '/' && !e.ctrlKey && !e.metaKey && !isTyping(e.target)) {
        e.preventDefault();
        input.current?.focus();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  return (
    <div class="search">
      <label class="visually-hidden" for="search">
        {t('search.label')}
      </label>
      <input
        id="search"
        ref={input}
        class="input"
        type="search"
        placeholder={t('search.placeholder')}
        title={`${t('search.label')} (/)`}
        value={props.value}
        onInput={(e) => props.onChange(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            props.onChange('');
            input.current?.blur();
          }
        }}
      />
    </div>
  );
}

export function SearchResults(props: { q: string; filter: ListFilter; selectedId: string | null }) {
  const [results, setResults] = useState<Result[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    const timer = setTimeout(async () => {
      try {
        const r = await must(api.GET('/v1/search', { params: { query: { q: props.q, limit: 50 } } }));
        if (current) {
          setResults(r.conversations);
          setError(null);
        }
      } catch (e) {
        if (current) setError(errorText(e));
      }
    }, 200);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [props.q]);
  if (error)
    return (
      <p class="empty" role="alert">
        {error}
      </p>
    );
  if (!results) return <div class="skeleton" style={{ margin: 'var(--space-3)' }} />;
  if (!results.length) return <p class="empty">{t('search.none', { q: props.q })}</p>;
  return (
    <ul role="list" aria-label={t('search.results', { q: props.q })} class="results">
      {results.map((r) => (
        <li key={r.conversation.id}>
          <a class="result" href={listUrl(props.filter, r.conversation.id)} aria-current={r.conversation.id === props.selectedId ? 'true' : undefined}>
            <span class="who">{r.conversation.contact.name || r.conversation.contact.email || t('list.unknown_contact')}</span>
            <span class="when">{relativeTime(r.conversation.last_message_at)}</span>
            <span class={`subject${r.conversation.subject ? '' : ' muted'}`}>{conversationTitle(r.conversation)}</span>
            <span class="snippet">{r.snippet}</span>
          </a>
        </li>
      ))}
    </ul>
  );
}
