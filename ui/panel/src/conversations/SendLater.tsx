// Send later (issue 34): a button beside Send that opens the quick times — later today, tomorrow
// 09:00, next Monday 09:00 in the member's time zone — or a chosen time. The reply is stored as
// scheduled (send_at); the timeline shows it with "Cancel" until it goes. "Unless the customer
// answers first" keeps it back (a note for its author) when the customer writes before then.
import { useState } from 'preact/hooks';
import { Dialog } from '../components/Dialog';
import { t } from '../i18n';
import { TimeChoices } from '../snooze';

export function SendLaterButton(props: { disabled: boolean; onPick: (at: Date, unlessCustomerReplies: boolean) => void }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button class="btn" type="button" aria-haspopup="dialog" disabled={props.disabled} onClick={() => setOpen(true)}>
        {t('composer.send_later')}
      </button>
      {open && (
        <SendLaterDialog
          onClose={() => setOpen(false)}
          onPick={(at, unless) => {
            setOpen(false);
            props.onPick(at, unless);
          }}
        />
      )}
    </>
  );
}

function SendLaterDialog(props: { onClose: () => void; onPick: (at: Date, unlessCustomerReplies: boolean) => void }) {
  const [unless, setUnless] = useState(false);
  return (
    <Dialog title={t('composer.send_later_title')} onClose={props.onClose}>
      <label class="field check-row">
        <input type="checkbox" checked={unless} onChange={(e) => setUnless(e.currentTarget.checked)} />
        {t('composer.unless_customer_replies')}
      </label>
      <TimeChoices idPrefix="send-later" applyLabel={t('composer.schedule')} onPick={(at) => props.onPick(at, unless)} />
    </Dialog>
  );
}
