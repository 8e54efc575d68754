// "… is typing" while the contact writes in the chat widget: shown for a few seconds after each of
// the widget's typing signals (realtime-only `typing` events), gone when their message arrives.
import { useEffect, useState } from 'preact/hooks';
import { t } from '../i18n';
import { onEvent } from '../realtime';

const SHOWN_MS = 6_000;

export function ContactTyping(props: { conversationId: string; contactName: string | null }) {
  const [typing, setTyping] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = onEvent((ev) => {
      if (ev.data.conversation?.id !== props.conversationId) return;
      if (ev.type === 'typing' && ev.data.author?.type === 'contact') {
        setTyping(true);
        clearTimeout(timer);
        timer = setTimeout(() => setTyping(false), SHOWN_MS);
      } else if (ev.type === 'message.created' && ev.data.message?.author?.type === 'contact') {
        clearTimeout(timer);
        setTyping(false);
      }
    });
    return () => {
      off();
      clearTimeout(timer);
      setTyping(false);
    };
  }, [props.conversationId]);
  return (
    <p class="muted typing-hint" role="status">
      {typing ? t('conv.contact_typing', { name: props.contactName ?? t('conv.visitor') }) : ''}
    </p>
  );
}
