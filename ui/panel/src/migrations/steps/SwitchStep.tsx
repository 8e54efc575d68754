// Step 7, Switch: forwarding to the service, its confirmation, and finishing.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { CopyField } from '../../components/Secret';
import type { MessageKey } from '../../i18n';
import { absoluteTime, relativeTime, t } from '../../i18n';
import { toast } from '../../state';
import { type Migration, useSourceText } from '../model';
import { ProgressBar } from './CopyStep';

export function SwitchStep(props: {
  m: Migration;
  confirmation: { code: string | null; link: string | null; from: string | null } | null;
  onChanged: (m: Migration) => void;
}) {
  const { m } = props;
  const st = useSourceText();
  const routing = m.routing;
  const tm = m.test_message;
  const sync = m.sync;
  return (
    <>
      <ProgressBar m={m} />
      <section class="card" aria-labelledby="mig-switch-title">
        <h2 id="mig-switch-title" style={{ marginTop: 0 }}>
          {t('mig.switch.title')}
        </h2>
        <p>{st('mig.switch.lead', { minutes: Math.round((sync?.poll_seconds ?? 120) / 60) })}</p>
        {!routing?.forwarding_address && <p class="notice">{t('mig.switch.mx_only')}</p>}
        <ol class="mig-ways">
          {routing?.ways.map((w) => (
            <li key={w.way} class="mig-way">
              <h3>{t(`mig.way.${w.way}` as MessageKey)}</h3>
              <p class="muted">
                {t(`mig.way.${w.way}_who` as MessageKey)} · {w.old_mailbox_keeps_a_copy ? t('mig.way.keeps_copy') : t('mig.way.no_copy')}
              </p>
              {w.address && <CopyField label={t('mig.switch.forwarding_address')} value={w.address} />}
              {w.way === 'mx' && <p>{t('mig.way.mx_how', { domain: w.domain ?? '—' })}</p>}
            </li>
          ))}
        </ol>
        {props.confirmation && (
          <div class="notice" role="status" data-testid="forwarding-confirmation">
            <p style={{ marginTop: 0 }}>
              <strong>{t('mig.switch.confirmation', { from: props.confirmation.from ?? '' })}</strong>
            </p>
            {props.confirmation.code && <CopyField label={t('mig.switch.confirmation_code')} value={props.confirmation.code} />}
            {props.confirmation.link && (
              <p>
                <a href={props.confirmation.link} target="_blank" rel="noopener noreferrer">
                  {t('mig.switch.confirmation_link')}
                </a>
              </p>
            )}
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="mig-test-title">
        <h2 id="mig-test-title" style={{ marginTop: 0 }}>
          {t('mig.switch.test_title')}
        </h2>
        <p class="muted">{st('mig.switch.test_lead')}</p>
        <p role="status" data-testid="test-message">
          {tm?.arrived_at
            ? t(tm.route === 'forwarding' ? 'mig.switch.arrived_forwarding' : 'mig.switch.arrived_direct', { when: absoluteTime(tm.arrived_at) })
            : tm?.sent_at
              ? t('mig.switch.sent_waiting', { when: absoluteTime(tm.sent_at) })
              : t('mig.switch.not_sent')}
        </p>
        {sync && (
          <ul class="muted">
            <li>{t('mig.switch.history_until', { when: absoluteTime(sync.history_until) })}</li>
            {sync.last_polled_at && <li>{st('mig.switch.last_polled', { when: relativeTime(sync.last_polled_at) })}</li>}
            <li>{st('mig.switch.new_mail', { n: sync.new_mail_from_old_mailbox, both: sync.arrived_both_ways })}</li>
            {sync.stops_at && <li>{t('mig.switch.stops_at', { when: absoluteTime(sync.stops_at) })}</li>}
          </ul>
        )}
        {sync?.completes_at ? (
          <Countdown until={sync.completes_at} />
        ) : (
          <p class="muted">{st('mig.switch.quiet_after_test', { hours: sync?.quiet_period_hours ?? 24 })}</p>
        )}
      </section>
      <KeepReadingChoice m={m} onChanged={props.onChanged} />
    </>
  );
}

function Countdown(props: { until: string }) {
  const st = useSourceText();
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = Math.max(0, Date.parse(props.until) - now);
  const h = Math.floor(left / 3_600_000);
  const min = Math.floor((left % 3_600_000) / 60_000);
  const s = Math.floor((left % 60_000) / 1000);
  return (
    <p class="notice" data-testid="countdown">
      {st('mig.switch.countdown', { time: `${h}:${String(min).padStart(2, '0')}:${String(s).padStart(2, '0')}`, when: absoluteTime(props.until) })}
    </p>
  );
}

/** The checkbox "Keep reading this mailbox live in <channel> after the move" (null when it cannot be chosen). */
export function KeepReadingBox(props: { m: Migration; checked: boolean; onChange: (on: boolean) => void }) {
  const k = props.m.keep_reading;
  if (!k?.possible) return null;
  const channel = k.channel_name ?? '';
  const id = `mig-keep-${props.m.id}`;
  return (
    <div class="field">
      <div class="mig-keep">
        <label>
          <input id={id} type="checkbox" checked={props.checked} onChange={(e) => props.onChange(e.currentTarget.checked)} aria-describedby={`${id}-hint`} />
          {t('mig.keep.label', { channel })}
        </label>
      </div>
      <span class="hint" id={`${id}-hint`}>
        {t(k.channel_reads_a_mailbox ? 'mig.keep.hint_reads' : 'mig.keep.hint', { channel })}
      </span>
    </div>
  );
}

/** The syncing step's choice, saved at once (PUT …/keep-reading). */
function KeepReadingChoice(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const k = m.keep_reading;
  const [busy, setBusy] = useState(false);
  if (!k || !m.allowed_actions.includes('keep_reading')) return null;
  async function choose(on: boolean) {
    // Not disabled while saving: a disabled checkbox would lose the keyboard's focus.
    if (busy) return;
    setBusy(true);
    try {
      const next = await must(api.PUT('/v1/migrations/{migrationId}/keep-reading', { params: { path: { migrationId: m.id } }, body: { keep_reading: on } }));
      props.onChanged(next as Migration);
      toast(on ? t('mig.keep.saved_on', { channel: k?.channel_name ?? '' }) : t('mig.keep.saved_off'));
    } catch (err) {
      toast(t('action.failed', { error: errorText(err) }));
    } finally {
      setBusy(false);
    }
  }
  return (
    <section class="card" aria-labelledby="mig-keep-title" data-testid="keep-reading">
      <h2 id="mig-keep-title" style={{ marginTop: 0 }}>
        {t('mig.keep.title')}
      </h2>
      {k.possible ? <KeepReadingBox m={m} checked={k.on} onChange={(on) => void choose(on)} /> : <p class="muted">{t('mig.keep.not_possible')}</p>}
    </section>
  );
}

export function FinishDialog(props: { m: Migration; onClose: () => void; onFinish: (force: boolean, keepReading: boolean | undefined) => Promise<void> }) {
  const st = useSourceText();
  const arrived = !!props.m.test_message?.arrived_at;
  const k = props.m.keep_reading;
  const [keep, setKeep] = useState(!!k?.on);
  // Sent only when it can be chosen: the server refuses keep_reading without an e-mail channel.
  const keepReading = k?.possible ? keep : undefined;
  return (
    <Confirm
      title={t('mig.action.finish')}
      lead={arrived ? (keepReading ? t('mig.finish.lead_keep') : st('mig.finish.lead')) : t('mig.finish.no_test')}
      onClose={props.onClose}
    >
      <KeepReadingBox m={props.m} checked={keep} onChange={setKeep} />
      <div class="row-actions">
        {arrived && (
          <button class="btn btn-primary" type="button" onClick={() => void props.onFinish(false, keepReading)}>
            {t('mig.finish.now')}
          </button>
        )}
      </div>
      <div class="notice notice-warn">
        <p style={{ marginTop: 0 }}>{st('mig.finish.force_warning')}</p>
        <button class="btn btn-danger" type="button" onClick={() => void props.onFinish(true, keepReading)}>
          {t('mig.finish.force')}
        </button>
      </div>
    </Confirm>
  );
}
