// The three panes: navigation, the conversation list, the open conversation.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { Dialog } from '../components/Dialog';
import { t } from '../i18n';
import { MergeUndoToast } from '../merge';
import { connectRealtime, onEvent, onReset } from '../realtime';
import { connection, me, refreshOverview, workspaceId } from '../state';
import { ConversationList } from './ConversationList';
import { ConversationPane } from './ConversationView';
import { NewConversationDialog } from './compose';
import { Nav } from './Nav';
import { isTyping } from './typing';
import { filterFromUrl, listUrl } from './views';

export function Workspace() {
  const { query, route } = useLocation();
  const { params } = useRoute();
  const filter = useMemo(() => filterFromUrl(query, params), [query.view, query.status, query.label, query.team, query.sort, query.saved, params.inbox]);
  const conversationId = params.id ?? null;
  const [navOpen, setNavOpen] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const [composing, setComposing] = useState(false);

  useEffect(() => {
    if (!workspaceId.value) return;
    connectRealtime(workspaceId.value);
    refreshOverview(true);
    const off = onEvent((ev) => {
      if (ev.type.startsWith('conversation.') || ev.type === 'message.created' || ev.type.startsWith('migration.')) refreshOverview();
    });
    const offReset = onReset(() => refreshOverview(true));
    return () => {
      off();
      offReset();
    };
  }, [workspaceId.value]);

  // Opening a conversation marks it read: the counts follow.
  useEffect(() => {
    if (conversationId) refreshOverview();
  }, [conversationId]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      if (e.key === '?') {
        e.preventDefault();
        setHelpOpen(true);
      } else if (e.key === 'c' && !document.querySelector('[role="dialog"]')) {
        e.preventDefault();
        setComposing(true);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  if (!me.value) return null;
  if (!workspaceId.value) {
    return (
      <main class="auth" id="main" tabIndex={-1}>
        <div class="auth-card">
          <p>{t('signin.no_workspace', { email: me.value.person.email })}</p>
        </div>
      </main>
    );
  }
  const pane = navOpen ? 'nav' : conversationId ? 'conversation' : 'list';
  return (
    <div class="shell" data-pane={pane}>
      <Nav filter={filter} onNavigate={() => setNavOpen(false)} onHelp={() => setHelpOpen(true)} />
      <main class="shell-main" id="main" tabIndex={-1}>
        <ConversationList filter={filter} selectedId={conversationId} onMenu={() => setNavOpen(true)} onNew={() => setComposing(true)} />
        <ConversationPane key={conversationId ?? 'none'} conversationId={conversationId} onBack={() => route(listUrl(filter))} />
        <MergeUndoToast />
      </main>
      {connection.value === 'reconnecting' && (
        <div class="banner" role="status" style={{ position: 'fixed', top: 0, left: 0, right: 0 }}>
          {t('realtime.reconnecting')}
        </div>
      )}
      {helpOpen && <ShortcutHelp onClose={() => setHelpOpen(false)} />}
      {(composing || query.write_to) && (
        <NewConversationDialog
          inboxId={filter.inbox ?? undefined}
          contactId={query.write_to || undefined}
          onClose={() => {
            setComposing(false);
            if (query.write_to) route(listUrl(filter), true);
          }}
          onStarted={(id) => {
            setComposing(false);
            route(`/conversations/${id}`);
          }}
        />
      )}
    </div>
  );
}

function ShortcutHelp(props: { onClose: () => void }) {
  const rows: [string, string][] = [
    ['j / k', t('shortcuts.move')],
    ['x', t('shortcuts.select')],
    ['e', t('shortcuts.close')],
    ['a', t('shortcuts.assign')],
    ['z', t('snooze.shortcut')],
    ['m', t('merge.shortcut')],
    ['r', t('shortcuts.reply')],
    ['n', t('shortcuts.note')],
    ['f', t('compose.forward_label')],
    ['c', t('compose.new_shortcut')],
    ['/', t('shortcuts.search')],
    ['Ctrl+Enter', t('shortcuts.send')],
    ['?', t('shortcuts.help')],
  ];
  return (
    <Dialog title={t('shortcuts.title')} onClose={props.onClose}>
      <dl class="shortcuts">
        {rows.map(([k, v]) => (
          <>
            <dt>
              <kbd class="kbd">{k}</kbd>
            </dt>
            <dd>{v}</dd>
          </>
        ))}
      </dl>
    </Dialog>
  );
}
