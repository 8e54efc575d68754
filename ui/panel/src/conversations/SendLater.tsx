// Send later (issue 34): a button beside Send that opens the quick times — later today, tomorrow
// 09:00, next Monday 09:00 in the member's time zone — or a chosen time. The reply is stored as
// scheduled (send_at); the timeline shows it with "Cancel" until it goes. "Unless the customer
// answers first" keeps it back (a note for its author) when the customer writes before then.
import { useState } from 'preact/hooks';
import { api, errorText, type Message, must, type Schemas } from '../api';
import { Dialog } from '../components/Dialog';
import { absoluteTime, t } from '../i18n';
import { TimeChoices } from '../snooze';
import { toast } from '../state';

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

/** A scheduled message's line in the timeline: when it goes, "Change time" and "Cancel" (its text back into the composer). */
export function ScheduledLine(props: {
  message: Message;
  onCancelled: (text: string, back: Schemas['CancelledMessage']) => void;
  onUpdated: (m: Message) => void;
}) {
  const m = props.message;
  const [moving, setMoving] = useState(false);
  const path = { conversationId: m.conversation_id, messageId: m.id };
  async function cancel() {
    try {
      const back = await must(api.DELETE('/v1/conversations/{conversationId}/messages/{messageId}/schedule', { params: { path } }));
      props.onCancelled(back.html ?? back.body, back);
    } catch (e) {
      toast(t('composer.undo_failed', { error: errorText(e) }));
    }
  }
  async function move(at: Date) {
    setMoving(false);
    try {
      props.onUpdated(
        await must(api.PATCH('/v1/conversations/{conversationId}/messages/{messageId}/schedule', { params: { path }, body: { send_at: at.toISOString() } })),
      );
      toast(t('composer.scheduled_for', { time: absoluteTime(at.toISOString()) }));
    } catch (e) {
      toast(t('conv.move_failed', { error: errorText(e) }));
    }
  }
  return (
    <p class="msg-status-pending" role="status">
      {t('conv.scheduled', { time: absoluteTime(m.send_at ?? '') })}
      {(m.details as { unless_customer_replies?: boolean } | null)?.unless_customer_replies ? ` · ${t('conv.scheduled_unless')}` : ''}{' '}
      <button class="btn" type="button" aria-haspopup="dialog" onClick={() => setMoving(true)}>
        {t('conv.change_time')}
      </button>{' '}
      <button class="btn" type="button" onClick={() => void cancel()}>
        {t('conv.cancel_scheduled')}
      </button>
      {moving && (
        <Dialog title={t('conv.change_time')} onClose={() => setMoving(false)}>
          <TimeChoices idPrefix={`move-${m.id}`} applyLabel={t('composer.schedule')} onPick={(at) => void move(at)} />
        </Dialog>
      )}
    </p>
  );
}
