// Settings: workspace, members, inboxes and channels, API keys, webhooks, saved replies and the
// person's own account, each at its own URL.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { t } from '../i18n';
import { MigrationsPage } from '../migrations';
import { membership } from '../state';
import { Account } from './account';
import { ApiKeys } from './api-keys';
import { AutomationSettings } from './automation';
import { CustomFieldsSettings } from './custom-fields';
import { InboxDetail, InboxList } from './inboxes';
import { MacrosSettings } from './macros';
import { Members } from './members';
import { SavedRepliesSettings } from './saved-replies';
import { TeamsSettings } from './teams';
import { WebhookDetail, Webhooks } from './webhooks';
import { WorkspaceSettings } from './workspace';

type Section =
  | 'workspace'
  | 'members'
  | 'teams'
  | 'custom-fields'
  | 'inboxes'
  | 'api-keys'
  | 'webhooks'
  | 'saved-replies'
  | 'automation'
  | 'macros'
  | 'migrations'
  | 'account';
const SECTIONS: [Section, Parameters<typeof t>[0], boolean][] = [
  ['workspace', 'settings.workspace', false],
  ['members', 'settings.members', false],
  ['teams', 'teams.title', false],
  ['custom-fields', 'cf.title', false],
  ['inboxes', 'settings.inboxes', true],
  ['api-keys', 'settings.api_keys', true],
  ['webhooks', 'settings.webhooks', true],
  ['saved-replies', 'settings.saved_replies', false],
  ['automation', 'auto.title', true],
  ['macros', 'macro.title', false],
  ['migrations', 'settings.migrations', true],
  ['account', 'settings.account', false],
];

export function Settings() {
  const { params } = useRoute();
  const section = (SECTIONS.find(([s]) => s === params.section)?.[0] ?? 'workspace') as Section;
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  const visible = SECTIONS.filter(([, , managersOnly]) => manager || !managersOnly);
  const current = SECTIONS.find(([id]) => id === section)!;
  // Below 900 px the section list is a disclosure behind a "Settings: <page>" button (the CSS hides
  // the button on wider screens, where the list is always shown); a chosen page or Esc closes it.
  const [menuOpen, setMenuOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  useEffect(() => setMenuOpen(false), [section]);
  return (
    <div class="settings">
      <nav
        class={menuOpen ? 'nav settings-nav open' : 'nav settings-nav'}
        aria-label={t('settings.title')}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && menuOpen) {
            setMenuOpen(false);
            toggle.current?.focus();
          }
        }}
      >
        <div class="nav-head">
          <a class="nav-link settings-back" href="/conversations">
            <span aria-hidden="true">←</span> <span class="settings-back-text">{t('settings.back')}</span>
          </a>
          <button
            ref={toggle}
            type="button"
            class="btn settings-menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="settings-sections"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            <span class="settings-menu-label">{t('settings.menu_current', { page: t(current[1]) })}</span>
            <span class="chevron" aria-hidden="true" />
          </button>
        </div>
        <div class="nav-scroll" id="settings-sections">
          {visible.map(([id, label]) => (
            <a key={id} class="nav-link" href={`/settings/${id}`} aria-current={section === id ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
              {t(label)}
            </a>
          ))}
        </div>
      </nav>
      <main class="settings-main" id="main" tabIndex={-1}>
        {current[2] && !manager ? <NoAccess /> : <SettingsSection section={section} id={params.id} manager={manager} />}
      </main>
    </div>
  );
}

/** A page only owners and admins may use, opened by someone else (a link, a typed URL). */
function NoAccess() {
  return (
    <section class="card" aria-labelledby="no-access-title">
      <h1 id="no-access-title">{t('settings.no_access')}</h1>
      <p class="muted">{t('settings.no_access_lead')}</p>
      <p>
        <a class="btn" href="/settings/account">
          {t('settings.no_access_back')}
        </a>
      </p>
    </section>
  );
}

function SettingsSection({ section, id, manager }: { section: Section; id: string | undefined; manager: boolean }) {
  const params = { id };
  return (
    <>
      {section === 'workspace' && <WorkspaceSettings manager={manager} />}
      {section === 'members' && <Members />}
      {section === 'teams' && <TeamsSettings />}
      {section === 'custom-fields' && <CustomFieldsSettings />}
      {section === 'inboxes' && (params.id ? <InboxDetail id={params.id} /> : <InboxList />)}
      {section === 'api-keys' && <ApiKeys />}
      {section === 'webhooks' && (params.id ? <WebhookDetail id={params.id} /> : <Webhooks />)}
      {section === 'saved-replies' && <SavedRepliesSettings />}
      {section === 'automation' && <AutomationSettings id={params.id} />}
      {section === 'macros' && <MacrosSettings />}
      {section === 'migrations' && <MigrationsPage id={params.id} />}
      {section === 'account' && <Account />}
    </>
  );
}
