// The satisfaction rating of a closed conversation, when the team asks for one. Its strings live
// here (this chunk loads when the chat opens), not in the launcher's catalogue.
import { useEffect, useState } from 'preact/hooks';
import type { Widget } from './host';
import { locale, t } from './i18n';

const RATING_TEXT = {
  en: {
    question: 'How satisfied are you with our answer?',
    score: '{n} of 5',
    comment: 'Anything to add? (optional)',
    send: 'Send rating',
    thanks: 'Thank you for your rating!',
  },
  tr: {
    question: 'Yanıtımızdan ne kadar memnun kaldınız?',
    score: '5 üzerinden {n}',
    comment: 'Eklemek istediğiniz bir şey var mı? (isteğe bağlı)',
    send: 'Değerlendirmeyi gönder',
    thanks: 'Değerlendirmeniz için teşekkürler!',
  },
};

export function RatingPrompt({ widget, conversationId }: { widget: Widget; conversationId: string }) {
  const text = RATING_TEXT[locale()];
  const [state, setState] = useState<'hidden' | 'asking' | 'thanks'>('hidden');
  const [score, setScore] = useState(0);
  const [comment, setComment] = useState('');
  const [failed, setFailed] = useState<string | null>(null);
  const client = widget.client;
  const auth = () => ({ authorization: `Bearer ${client.session()?.token ?? ''}` });
  useEffect(() => {
    void client.api.GET('/v1/widget/conversations/{conversationId}/rating', { params: { path: { conversationId } }, headers: auth() }).then(
      (r) => r.data?.asked && setState('asking'),
      () => undefined,
    );
  }, [conversationId]);
  if (state === 'hidden') return null;
  if (state === 'thanks')
    return (
      <p class="rating-done" role="status">
        {text.thanks}
      </p>
    );
  return (
    <form
      class="rating"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!score) return;
        const r = await client.api.POST('/v1/widget/conversations/{conversationId}/rating', {
          params: { path: { conversationId } },
          headers: auth(),
          body: comment.trim() ? { score, comment: comment.trim() } : { score },
        });
        if (r.response.ok || r.response.status === 409) setState('thanks');
        else setFailed(t('send_failed', { error: r.response.statusText }));
      }}
    >
      <fieldset>
        <legend>{text.question}</legend>
        <div class="rating-scores">
          {[1, 2, 3, 4, 5].map((n) => (
            <label key={n} class={n === score ? 'on' : undefined}>
              <input
                type="radio"
                name="svc-rating"
                value={n}
                checked={n === score}
                onChange={() => setScore(n)}
                aria-label={text.score.replace('{n}', String(n))}
              />
              <span aria-hidden="true">{n}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <label for="svc-rating-comment">{text.comment}</label>
      <textarea id="svc-rating-comment" rows={2} maxLength={2000} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
      {failed && <p role="alert">{failed}</p>}
      <button type="submit" class="send" disabled={!score}>
        {text.send}
      </button>
    </form>
  );
}
