// What the chat says about the team: presence beside the dot, whether the e-mail question comes
// first (only while nobody is online), the address asked beside the first message, and who wrote.
import type { RefObject } from 'preact';
import type { VisitorMessage, WidgetConfig } from './client';
import { locale, replyTime, t } from './i18n';

/** How often an open chat asks again whether anyone on the team is online. */
export const PRESENCE_MS = 60_000;

/** What the header says beside the dot: never "away" next to a green dot, never "online" without one. */
export function availability(config: WidgetConfig): string {
  if (config.team_online) return t('online_now');
  // Outside the inbox's business hours: when the team answers again, on the visitor's own clock.
  const hours = config.hours;
  if (hours && !hours.open_now && hours.next_opening) {
    const when = new Intl.DateTimeFormat(locale(), { weekday: 'long', hour: '2-digit', minute: '2-digit' }).format(Date.parse(hours.next_opening));
    return t('away_until', { when });
  }
  const minutes = config.inbox.expected_reply_minutes;
  return minutes ? t('replies_in', { time: replyTime(minutes) }) : t('reply_soon');
}

/** The e-mail question comes first only while nobody is online (and the channel asks, or needs, one). */
export function emailFirst(config: WidgetConfig): boolean {
  return !config.team_online && (!config.channel.allow_anonymous || config.channel.ask_email_offline);
}

/** A channel that needs an address, while someone is online: asked beside the first message. */
export function EmailBesideMessage(props: { inputRef: RefObject<HTMLInputElement | null>; value: string; onInput: (v: string) => void }) {
  return (
    <div class="with-email">
      <label for="svc-email">{t('email_ask')}</label>
      <input
        id="svc-email"
        ref={props.inputRef}
        type="email"
        autocomplete="email"
        placeholder={t('email_label')}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </div>
  );
}

/** Who wrote a message: "You", or a member's first name with its initial, else "Team". */
export function Who(props: { author: VisitorMessage['author'] }) {
  const { author } = props;
  return (
    <span class="who">
      {author.type === 'team' && author.name && (
        <span class="avatar" aria-hidden="true">
          {author.name.slice(0, 1).toLocaleUpperCase(locale())}
        </span>
      )}
      {author.type === 'contact' ? t('you') : (author.name ?? t('team'))}
    </span>
  );
}
