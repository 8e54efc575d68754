// "Install app": where the browser offers installing the panel (beforeinstallprompt), a dismissible
// line at the bottom of the sidebar; dismissing it is remembered in this browser.
import { signal } from '@preact/signals';
import { t } from '../i18n';

interface InstallPrompt extends Event {
  prompt(): Promise<void>;
  userChoice: Promise<{ outcome: 'accepted' | 'dismissed' }>;
}

const DISMISSED = 'svc.install-hint-dismissed';
const offer = signal<InstallPrompt | null>(null);

/** Registers the service worker (installability, push) and keeps the browser's install offer. */
export function watchInstallability(): void {
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('/sw.js').catch(() => {});
  window.addEventListener('beforeinstallprompt', (e) => {
    e.preventDefault();
    offer.value = e as InstallPrompt;
  });
  window.addEventListener('appinstalled', () => {
    offer.value = null;
  });
}

function dismissed(): boolean {
  try {
    return localStorage.getItem(DISMISSED) === '1';
  } catch {
    return false;
  }
}

export function InstallHint() {
  const prompt = offer.value;
  if (!prompt || dismissed()) return null;
  const dismiss = () => {
    try {
      localStorage.setItem(DISMISSED, '1');
    } catch {}
    offer.value = null;
  };
  return (
    <div class="install-hint" role="region" aria-label={t('install.title')}>
      <p>{t('install.lead')}</p>
      <button
        type="button"
        class="btn btn-primary"
        onClick={async () => {
          await prompt.prompt();
          if ((await prompt.userChoice).outcome === 'accepted') offer.value = null;
        }}
      >
        {t('install.action')}
      </button>
      <button type="button" class="btn btn-ghost btn-icon" aria-label={t('install.dismiss')} onClick={dismiss}>
        ×
      </button>
    </div>
  );
}
