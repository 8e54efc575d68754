// The conversation's Snooze control: a button (shortcut z) that opens the choices — later today,
// tomorrow 09:00, next Monday 09:00 in the member's time zone, a chosen time, until the customer
// answers — and, while snoozed, a badge with the wake time and "Wake up now".
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Dialog } from '../components/Dialog';
import './snooze.css';
import { locale, t } from '../i18n';
import { fromLocalInput, snoozeChoices, wakeText } from './choices';

/** What PATCH snoozed_until takes: an ISO time, 'customer_reply', or null to wake now. */
export type SnoozeValue = string | 'customer_reply' | null;

export function SnoozeBadge(props: { snoozedUntil: string | null }) {
  if (!props.snoozedUntil) return null;
  const text =
    props.snoozedUntil === 'customer_reply' ? t('snooze.badge_reply') : t('snooze.badge_until', { when: wakeText(props.snoozedUntil, locale.value) });
  return (
    <span class="badge snooze-badge" title={props.snoozedUntil === 'customer_reply' ? undefined : new Date(props.snoozedUntil).toLocaleString(locale.value)}>
      {text}
    </span>
  );
}

export function SnoozeButton(props: { snoozedUntil: string | null; open: boolean; onOpen: (open: boolean) => void; onSnooze: (v: SnoozeValue) => void }) {
  return (
    <>
      <button class="btn" type="button" aria-haspopup="dialog" onClick={() => props.onOpen(true)} title={`${t('snooze.button')} (z)`}>
        {t('snooze.button')}
      </button>
      {props.open && <SnoozeDialog snoozedUntil={props.snoozedUntil} onClose={() => props.onOpen(false)} onSnooze={props.onSnooze} />}
    </>
  );
}

function SnoozeDialog(props: { snoozedUntil: string | null; onClose: () => void; onSnooze: (v: SnoozeValue) => void }) {
  const choose = (v: SnoozeValue) => {
    props.onClose();
    props.onSnooze(v);
  };
  return (
    <Dialog title={t('snooze.menu')} onClose={props.onClose}>
      <TimeChoices idPrefix="snooze" applyLabel={t('snooze.pick_apply')} onPick={(at) => choose(at.toISOString())}>
        <li>
          <button class="btn snooze-choice" type="button" onClick={() => choose('customer_reply')}>
            {t('snooze.customer_reply')}
          </button>
        </li>
      </TimeChoices>
      {props.snoozedUntil && (
        <p>
          <button class="btn" type="button" onClick={() => choose(null)}>
            {t('snooze.wake_now')}
          </button>
        </p>
      )}
    </Dialog>
  );
}

/**
 * Quick times (later today, tomorrow 09:00, next Monday 09:00 on the member's clock; `children` adds
 * more) and a chosen time: what Snooze and Send later offer.
 */
export function TimeChoices(props: { idPrefix: string; applyLabel: string; onPick: (at: Date) => void; children?: ComponentChildren }) {
  const [picked, setPicked] = useState('');
  const custom = fromLocalInput(picked);
  const when = (at: Date) => wakeText(at.toISOString(), locale.value);
  return (
    <>
      <ul class="snooze-choices" role="list">
        {snoozeChoices(new Date()).map((c) => (
          <li key={c.key}>
            <button class="btn snooze-choice" type="button" onClick={() => props.onPick(c.at)}>
              <span>{t(`snooze.${c.key}`)}</span>
              <span class="muted">{when(c.at)}</span>
            </button>
          </li>
        ))}
        {props.children}
      </ul>
      <form
        class="snooze-pick"
        onSubmit={(e) => {
          e.preventDefault();
          if (custom && custom.getTime() > Date.now()) props.onPick(custom);
        }}
      >
        <label for={`${props.idPrefix}-at`}>{t('snooze.pick')}</label>
        <input id={`${props.idPrefix}-at`} class="input" type="datetime-local" value={picked} onInput={(e) => setPicked(e.currentTarget.value)} />
        <button class="btn btn-primary" type="submit" disabled={!custom || custom.getTime() <= Date.now()}>
          {props.applyLabel}
        </button>
      </form>
    </>
  );
}
