// The three panes: navigation, the conversation list, the open conversation.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { loadMacros, macroCommands } from '../automation';
import { Dialog } from '../components/Dialog';
import { t } from '../i18n';
import { MergeUndoToast, mergeAsked, splitAsked } from '../merge';
import { type Command, CommandPalette } from '../palette';
import { connectRealtime, onEvent, onReset } from '../realtime';
import { connection, me, refreshOverview, workspaceId } from '../state';
import { ConversationList } from './ConversationList';
import { ConversationPane } from './ConversationView';
import { composeAsked, NewConversationDialog } from './compose';
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
  const [palette, setPalette] = useState(false);

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

  // A new conversation whose send was undone: the conversation is gone (leave it), the dialog opens again.
  const asked = composeAsked.value;
  useEffect(() => {
    if (asked?.removed && asked.removed === conversationId) route(listUrl(filter), true);
  }, [asked]);

  // Opening a conversation marks it read: the counts follow.
  useEffect(() => {
    if (conversationId) refreshOverview();
  }, [conversationId]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      // Ctrl/Cmd+K from anywhere but a text editor (there it makes a link) and an open dialog.
      if (e.key === 'k' && (e.ctrlKey || e.metaKey) && !e.altKey && !e.defaultPrevented && !document.querySelector('[role="dialog"]')) {
        e.preventDefault();
        void loadMacros().catch(() => {});
        setPalette(true);
        return;
      }
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
      {palette && (
        <CommandPalette
          title={t('palette.title')}
          placeholder={t('palette.filter')}
          commands={paletteCommands(conversationId, route, () => setComposing(true))}
          onClose={() => setPalette(false)}
        />
      )}
      {(composing || query.write_to || asked) && (
        <NewConversationDialog
          key={asked ? `again-${asked.removed ?? ''}` : 'new'}
          inboxId={filter.inbox ?? undefined}
          contactId={asked ? undefined : query.write_to || undefined}
          initial={asked ?? undefined}
          onClose={() => {
            setComposing(false);
            composeAsked.value = null;
            if (query.write_to) route(listUrl(filter), true);
          }}
          onStarted={(id) => {
            setComposing(false);
            composeAsked.value = null;
            route(`/conversations/${id}`);
          }}
        />
      )}
    </div>
  );
}

/** What the palette offers: macros on the open conversation, the views, a new conversation, settings. */
function paletteCommands(conversationId: string | null, route: (url: string) => void, compose: () => void): Command[] {
  const go = (id: string, label: string, url: string): Command => ({ id, label, run: () => route(url) });
  return [
    ...(conversationId ? macroCommands(conversationId) : []),
    ...(conversationId ? [{ id: 'merge', label: t('palette.merge'), hint: 'm', run: () => (mergeAsked.value = conversationId) }] : []),
    ...(conversationId ? [{ id: 'split', label: t('palette.split'), run: () => (splitAsked.value = conversationId) }] : []),
    { id: 'new', label: t('palette.new_conversation'), hint: 'c', run: compose },
    go('mine', t('palette.view', { name: t('nav.mine') }), '/conversations?view=mine'),
    go('unassigned', t('palette.view', { name: t('nav.unassigned') }), '/conversations?view=unassigned'),
    go('all', t('palette.view', { name: t('nav.all') }), '/conversations'),
    go('automation', t('palette.settings', { name: t('auto.title') }), '/settings/automation'),
    go('macros', t('palette.settings', { name: t('macro.title') }), '/settings/macros'),
    go('teams', t('palette.settings', { name: t('teams.title') }), '/settings/teams'),
    go('replies', t('palette.settings', { name: t('settings.saved_replies') }), '/settings/saved-replies'),
  ];
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
    ['Shift+M', t('macro.shortcut')],
    ['Ctrl+K', t('palette.shortcut')],
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
