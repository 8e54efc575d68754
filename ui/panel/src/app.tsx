// Routes of the panel. Every URL is real: a reload lands on the same view.
import { useEffect } from 'preact/hooks';
import { LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { AnalyticsPage } from './analytics';
import { whenUnauthorized } from './api';
import { Toasts } from './components/Toasts';
import { Workspace } from './conversations';
import { t } from './i18n';
import { NotificationListener } from './notifications';
import { AcceptInvite, SignIn, SignInLink } from './sign-in';
import { loadMe, me } from './state';

// Charts (uPlot) load with the reports page only.
const Reports = lazy(() => import('./reports'));
// The contacts list and a contact's page, likewise.
const Contacts = lazy(() => import('./contacts/pages'));
// Settings and the mailbox-move pages are not needed to answer customers: they load when opened,
// which keeps the first load (sign-in to the conversation view) small.
const Settings = lazy(() => import('./settings').then((m) => m.Settings));
const ConnectMailbox = lazy(() => import('./migrations').then((m) => m.ConnectMailbox));

whenUnauthorized(() => {
  if (!location.pathname.startsWith('/sign-in') && location.pathname !== '/invite') me.value = null;
});

export function App() {
  useEffect(() => {
    void loadMe().catch(() => (me.value = null));
  }, []);
  return (
    <LocationProvider>
      <Gate />
      <NotificationListener />
      <Toasts />
    </LocationProvider>
  );
}

function Gate() {
  const { path, route } = useLocation();
  const signedIn = me.value;
  const onSignIn = path === '/sign-in';
  // Pages that work signed out: signing in, a sign-in link, an invite, a migration's password page.
  const open = onSignIn || path === '/sign-in/link' || path === '/invite' || /^\/migrations\/[^/]+\/connect$/.test(path);
  useEffect(() => {
    if (signedIn === null && !open) route(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, true);
    if (signedIn && (path === '/' || onSignIn)) route(safeNext(), true);
  }, [signedIn, path]);
  if (signedIn === undefined) return <div class="auth" aria-busy="true" />;
  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link to #main; the handler only does what the router would undo */}
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          // The router would take the link as a navigation; focus the page's main region instead.
          e.preventDefault();
          skipToMain();
        }}
      >
        {t('a11y.skip')}
      </a>
      <Router>
        <Route path="/sign-in" component={SignIn} />
        <Route path="/sign-in/link" component={SignInLink} />
        <Route path="/invite" component={AcceptInvite} />
        <Route path="/migrations/:id/connect" component={ConnectMailbox} />
        <Route path="/conversations/:id?" component={Workspace} />
        <Route path="/inboxes/:inbox/:id?" component={Workspace} />
        <Route path="/settings/:section?/:id?" component={Settings} />
        <Route path="/reports" component={Reports} />
        <Route path="/contacts/:id?" component={Contacts} />
        <Route path="/analytics" component={AnalyticsPage} />
        <Route default component={Workspace} />
      </Router>
    </>
  );
}

/** Moves the focus to the page's main region (its first shown pane where the region has no box of its own). */
function skipToMain() {
  const main = document.getElementById('main');
  if (!main) return;
  main.focus();
  if (document.activeElement === main) return;
  const pane = [...main.children].find((el): el is HTMLElement => el instanceof HTMLElement && el.offsetParent !== null);
  if (!pane) return;
  if (!pane.hasAttribute('tabindex')) pane.setAttribute('tabindex', '-1');
  pane.focus();
}

/** Where to go after signing in: a same-site panel path only. */
function safeNext(): string {
  const next = new URLSearchParams(location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-in') ? next : '/conversations';
}
