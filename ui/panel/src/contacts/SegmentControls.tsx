// The contacts page's segments: the name form (save the list's filter as a new segment, or rename
// the one shown) and, for the segment shown, what it asks in words, Rename, Delete (confirmed) and,
// once the filters were changed, Update segment.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../api';
import { Confirm } from '../components/Confirm';
import { FormError } from '../components/FormError';
import { calendarDay, t } from '../i18n';
import { inboxes, toast } from '../state';
import { dayOfAfter, dayOfBefore, loadSegments, type Segment, type SegmentFilter } from './segments';

/** Save the current filter under a name (a new segment), or rename `segment`. */
export function SegmentNameForm(props: { segment?: Segment; filter: SegmentFilter; onDone: (s: Segment | null) => void }) {
  const [name, setName] = useState(props.segment?.name ?? '');
  const [error, setError] = useState<string | null>(null);
  // Opened from a button: the name field takes the focus, so the name can be typed at once.
  useEffect(() => document.getElementById('segment-name')?.focus(), []);
  async function submit(e: Event) {
    e.preventDefault();
    const n = name.trim();
    if (!n) return;
    setError(null);
    try {
      const s = props.segment
        ? await must(api.PATCH('/v1/segments/{segmentId}', { params: { path: { segmentId: props.segment.id } }, body: { name: n } }))
        : await must(api.POST('/v1/segments', { body: { name: n, filter: props.filter } }));
      await loadSegments();
      toast(t(props.segment ? 'segment.renamed' : 'segment.saved', { name: s.name }));
      props.onDone(s);
    } catch (err) {
      setError(errorText(err));
    }
  }
  return (
    <form class="card contacts-segment" onSubmit={(e) => void submit(e)}>
      <div class="field">
        <label for="segment-name">{props.segment ? t('segment.new_name') : t('segment.name')}</label>
        <input id="segment-name" class="input" value={name} maxLength={100} required onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <button class="btn btn-primary" type="submit">
        {props.segment ? t('segment.rename') : t('segment.save')}
      </button>
      <button class="btn btn-ghost" type="button" onClick={() => props.onDone(null)}>
        {t('segment.cancel')}
      </button>
      <FormError error={error} />
    </form>
  );
}

/** The parts of a segment's filter in words. */
export function describeSegment(f: SegmentFilter): string[] {
  const parts: string[] = [];
  if (f.q) parts.push(t('segment.says_q', { q: f.q }));
  if (f.has_open !== undefined) parts.push(f.has_open ? t('contacts.show_open') : t('contacts.show_no_open'));
  if (f.created_after) parts.push(t('segment.says_after', { day: calendarDay(dayOfAfter(f.created_after)) }));
  if (f.created_before) parts.push(t('segment.says_before', { day: calendarDay(dayOfBefore(f.created_before)) }));
  if (f.email) parts.push(t('segment.says_email', { email: f.email }));
  if (f.inbox_id) parts.push(t('segment.says_inbox', { inbox: inboxes.value.find((i) => i.id === f.inbox_id)?.name ?? f.inbox_id }));
  if (f.external_id) parts.push(t('segment.says_external', { id: f.external_id }));
  return parts;
}

export function SegmentBar(props: { segment: Segment; modified: boolean; filter: SegmentFilter; onRename: () => void; onDeleted: () => void }) {
  const s = props.segment;
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const said = describeSegment(s.filter);
  async function update() {
    setError(null);
    try {
      await must(api.PATCH('/v1/segments/{segmentId}', { params: { path: { segmentId: s.id } }, body: { filter: props.filter } }));
      await loadSegments();
      toast(t('segment.updated', { name: s.name }));
    } catch (err) {
      setError(errorText(err));
    }
  }
  return (
    <section class="card contacts-segment-bar" aria-labelledby="segment-shown">
      <h2 id="segment-shown" class="contacts-segment-title">
        {t('segment.shown', { name: s.name })}
      </h2>
      <p class="muted">{said.length ? said.join(' · ') : t('segment.says_all')}</p>
      {props.modified && <p class="contacts-segment-changed">{t('segment.changed')}</p>}
      <div class="contacts-actions">
        {props.modified && (
          <button class="btn btn-primary" type="button" onClick={() => void update()}>
            {t('segment.update')}
          </button>
        )}
        <button class="btn" type="button" onClick={props.onRename}>
          {t('segment.rename')}
        </button>
        <button class="btn btn-ghost" type="button" onClick={() => setConfirming(true)}>
          {t('segment.delete')}
        </button>
      </div>
      <FormError error={error} />
      {confirming && (
        <Confirm
          title={t('segment.delete')}
          lead={t('segment.delete_lead', { name: s.name })}
          action={t('segment.delete')}
          onClose={() => setConfirming(false)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/segments/{segmentId}', { params: { path: { segmentId: s.id } } }));
              await loadSegments();
              toast(t('segment.deleted', { name: s.name }));
              setConfirming(false);
              props.onDeleted();
            } catch (err) {
              setConfirming(false);
              setError(errorText(err));
            }
          }}
        />
      )}
    </section>
  );
}
