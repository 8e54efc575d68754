// Send later (issue 34): a button beside Send that opens the quick times — later today, tomorrow
// 09:00, next Monday 09:00 in the member's time zone — or a chosen time. The reply is stored as
// scheduled (send_at); the timeline shows it with "Cancel" until it goes.
import { useState } from 'preact/hooks';
import { Dialog } from '../components/Dialog';
import { locale, t } from '../i18n';
import { fromLocalInput, laterChoices, wakeText } from '../snooze';

export function SendLaterButton(props: { disabled: boolean; onPick: (at: Date) => void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button class="btn" type="button" aria-haspopup="dialog" disabled={props.disabled} onClick={() => setOpen(true)}>
        {t('composer.send_later')}
      </button>
      {open && (
        <SendLaterDialog
          onClose={() => setOpen(false)}
          onPick={(at) => {
            setOpen(false);
            props.onPick(at);
          }}
        />
      )}
    </>
  );
}

function SendLaterDialog(props: { onClose: () => void; onPick: (at: Date) => void }) {
  const [picked, setPicked] = useState('');
  const custom = fromLocalInput(picked);
  const when = (at: Date) => wakeText(at.toISOString(), locale.value);
  return (
    <Dialog title={t('composer.send_later_title')} onClose={props.onClose}>
      <ul class="snooze-choices" role="list">
        {laterChoices(new Date()).map((c) => (
          <li key={c.key}>
            <button class="btn snooze-choice" type="button" onClick={() => props.onPick(c.at)}>
              <span>{t(`snooze.${c.key}`)}</span>
              <span class="muted">{when(c.at)}</span>
            </button>
          </li>
        ))}
      </ul>
      <form
        class="snooze-pick"
        onSubmit={(e) => {
          e.preventDefault();
          if (custom && custom.getTime() > Date.now()) props.onPick(custom);
        }}
      >
        <label for="send-later-at">{t('snooze.pick')}</label>
        <input id="send-later-at" class="input" type="datetime-local" value={picked} onInput={(e) => setPicked(e.currentTarget.value)} />
        <button class="btn btn-primary" type="submit" disabled={!custom || custom.getTime() <= Date.now()}>
          {t('composer.schedule')}
        </button>
      </form>
    </Dialog>
  );
}
