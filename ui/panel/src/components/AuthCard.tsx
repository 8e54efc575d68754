// The card of the pages a person sees before the panel (sign-in, sign-in link, invite, the
// mailbox-connect link): the product's name above the page's heading, centred on the screen.
import type { ComponentChildren } from 'preact';
import { t } from '../i18n';

export function AuthCard(props: { title: string; children: ComponentChildren }) {
  return (
    <main class="auth" id="main" tabIndex={-1}>
      <div class="auth-card">
        <p class="brand" aria-hidden="true">
          {t('app.name')}
        </p>
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </main>
  );
}
