// An inbox's business hours (on its settings page): always open, or a weekly schedule with several
// intervals a day, and dated exceptions (a holiday closed all day, an early closing). Saved with
// PUT /v1/inboxes/{id}/hours; a refused schedule shows the server's reason, naming the field.
import { useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { FormError } from '../../components/FormError';
import { Loading, useLoad } from '../../components/Loading';
import { absoluteTime, t } from '../../i18n';
import { toast } from '../../state';
import './hours.css';

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
type Day = (typeof DAYS)[number];
type Interval = { start: string; end: string };
type Exception = { date: string; intervals: Interval[] };
interface Hours {
  timezone: string;
  weekly: Partial<Record<Day, Interval[]>> | null;
  exceptions: Exception[];
  open_now: boolean;
  next_opening: string | null;
}

export function BusinessHoursCard(props: { inboxId: string; onSaved?: () => void }) {
  const { inboxId } = props;
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/inboxes/{inboxId}/hours', { params: { path: { inboxId } } })), [inboxId]);
  return (
    <section class="card" aria-labelledby="hours-title">
      <h2 id="hours-title" style={{ marginTop: 0 }}>
        {t('hours.title')}
      </h2>
      <p class="muted">{t('hours.lead')}</p>
      {!data ? (
        <Loading error={error} retry={reload} />
      ) : (
        <HoursForm
          key={data.updated_at ?? ''}
          inboxId={inboxId}
          saved={data as Hours}
          onSaved={() => {
            void reload();
            props.onSaved?.();
          }}
        />
      )}
    </section>
  );
}

const OFFICE: Interval[] = [{ start: '09:00', end: '17:00' }];

function HoursForm(props: { inboxId: string; saved: Hours; onSaved: () => unknown }) {
  const { saved } = props;
  const [scheduled, setScheduled] = useState(saved.weekly !== null);
  const [weekly, setWeekly] = useState<Record<Day, Interval[]>>(
    () =>
      Object.fromEntries(DAYS.map((d) => [d, saved.weekly ? (saved.weekly[d] ?? []) : ['sat', 'sun'].includes(d) ? [] : OFFICE])) as Record<Day, Interval[]>,
  );
  const [exceptions, setExceptions] = useState<Exception[]>(saved.exceptions);
  const [problem, setProblem] = useState<string | null>(null);
  const setDay = (d: Day, list: Interval[]) => setWeekly((w) => ({ ...w, [d]: list }));
  const setException = (i: number, e: Exception | null) => setExceptions((old) => (e ? old.map((x, n) => (n === i ? e : x)) : old.filter((_, n) => n !== i)));

  return (
    <form
      class="hours-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setProblem(null);
        try {
          const body = {
            weekly: scheduled ? (Object.fromEntries(DAYS.map((d) => [d, weekly[d]])) as Record<Day, Interval[]>) : null,
            exceptions,
          };
          await must(api.PUT('/v1/inboxes/{inboxId}/hours', { params: { path: { inboxId: props.inboxId } }, body }));
          toast(t('settings.saved'));
          void props.onSaved();
        } catch (err) {
          setProblem(errorText(err));
        }
      }}
    >
      <p class="hours-status" role="status">
        {saved.open_now ? t('hours.open_now') : saved.next_opening ? t('hours.opens', { when: absoluteTime(saved.next_opening) }) : t('hours.never')}{' '}
        <span class="muted">({saved.timezone})</span>
      </p>
      <fieldset class="hours-mode">
        <legend class="visually-hidden">{t('hours.title')}</legend>
        <label>
          <input type="radio" name="hours-mode" checked={!scheduled} onChange={() => setScheduled(false)} /> {t('hours.always')}
        </label>
        <label>
          <input type="radio" name="hours-mode" checked={scheduled} onChange={() => setScheduled(true)} /> {t('hours.scheduled')}
        </label>
      </fieldset>
      {scheduled && (
        <div class="hours-week">
          {DAYS.map((d) => (
            <DayRow key={d} label={t(`hours.day.${d}`)} id={`hours-${d}`} intervals={weekly[d]} onChange={(list) => setDay(d, list)} />
          ))}
        </div>
      )}
      <h3>{t('hours.exceptions')}</h3>
      {exceptions.length === 0 && <p class="muted">{t('hours.no_exceptions')}</p>}
      {exceptions.map((x, i) => (
        <div class="hours-exception" key={i}>
          <label class="visually-hidden" for={`hours-ex-${i}`}>
            {t('hours.date')}
          </label>
          <input
            id={`hours-ex-${i}`}
            class="input"
            type="date"
            required
            value={x.date}
            onInput={(e) => setException(i, { ...x, date: e.currentTarget.value })}
          />
          <DayRow
            label={x.intervals.length ? t('hours.open_from_to') : t('hours.closed_all_day')}
            id={`hours-ex-${i}-day`}
            intervals={x.intervals}
            onChange={(list) => setException(i, { ...x, intervals: list })}
          />
          <button class="btn btn-ghost" type="button" onClick={() => setException(i, null)}>
            {t('hours.remove_exception')}
          </button>
        </div>
      ))}
      <p>
        <button class="btn" type="button" onClick={() => setExceptions((old) => [...old, { date: '', intervals: [] }])}>
          {t('hours.add_exception')}
        </button>
      </p>
      <FormError error={problem} />
      <button class="btn btn-primary" type="submit">
        {t('settings.save')}
      </button>
    </form>
  );
}

function DayRow(props: { label: string; id: string; intervals: Interval[]; onChange: (list: Interval[]) => void }) {
  const { intervals } = props;
  const set = (i: number, v: Interval) => props.onChange(intervals.map((x, n) => (n === i ? v : x)));
  return (
    <div class="hours-day" role="group" aria-labelledby={`${props.id}-label`}>
      <span id={`${props.id}-label`} class="hours-day-name">
        {props.label}
      </span>
      <div class="hours-intervals">
        {intervals.length === 0 && <span class="muted">{t('hours.closed')}</span>}
        {intervals.map((x, i) => (
          <span class="hours-interval" key={i}>
            <input
              class="input"
              type="time"
              aria-label={t('hours.from', { n: i + 1 })}
              value={x.start}
              onInput={(e) => set(i, { ...x, start: e.currentTarget.value })}
            />
            –
            <input
              class="input"
              type="time"
              aria-label={t('hours.to', { n: i + 1 })}
              value={x.end === '24:00' ? '23:59' : x.end}
              onInput={(e) => set(i, { ...x, end: e.currentTarget.value })}
            />
            <button
              class="btn btn-ghost btn-icon"
              type="button"
              aria-label={t('hours.remove_interval')}
              onClick={() => props.onChange(intervals.filter((_, n) => n !== i))}
            >
              ×
            </button>
          </span>
        ))}
        <button
          class="btn btn-ghost"
          type="button"
          onClick={() =>
            props.onChange([...intervals, intervals.length ? { start: intervals[intervals.length - 1].end, end: '18:00' } : { start: '09:00', end: '17:00' }])
          }
        >
          {t('hours.add_interval')}
        </button>
      </div>
    </div>
  );
}
