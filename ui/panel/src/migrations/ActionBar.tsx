// The action bar: exactly the migration's allowed_actions, each a button or a link to its form.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, must } from '../api';
import { Confirm } from '../components/Confirm';
import { t } from '../i18n';
import { toast } from '../state';
import { RateLimited } from './MigrationPasswordForm';
import { ACTION_KEY, type Migration, type PlanSummary, plural, reachable, type Step, useSourceText } from './model';
import { RemoveHistoryDialog } from './steps/DoneStep';
import { FinishDialog, KeepReadingBox } from './steps/SwitchStep';

/** Actions that change the migration from the bar; the others open the step where their form is. */
const BUTTON_ACTIONS = new Set(['scan', 'start', 'pause', 'resume', 'cancel', 'retry', 'probe', 'finish', 'remove_history', 'delete']);
const DANGER_ACTIONS = new Set(['cancel', 'delete', 'remove_history']);
const isPrimaryAction = (m: Migration, a: string) => a === 'start' || a === 'resume' || (a === 'scan' && m.state === 'connected');

/** The action bar's order: the step's next action first, the ones that end or delete something last. */
function actionOrder(m: Migration): string[] {
  const rank = (a: string) => (isPrimaryAction(m, a) ? 0 : DANGER_ACTIONS.has(a) ? 2 : 1);
  return [...m.allowed_actions].sort((a, b) => rank(a) - rank(b));
}
const FORM_STEPS: Record<string, Step[]> = {
  update: ['map', 'choose', 'connect'],
  credentials: ['connect'],
  test: ['connect'],
  upload: ['connect'],
  folders: ['choose'],
  preview: ['review'],
};

/** The step whose form does an action: the first of its steps open now. */
function formStep(m: Migration, action: string): Step {
  const steps = FORM_STEPS[action] ?? ['connect'];
  return steps.find((s) => reachable(m, s)) ?? steps[0];
}

/**
 * The migration's allowed_actions, each as a button or as a link to its form, less what would do
 * nothing here: a link to the step already shown or to one not open yet (folders after a failed
 * sign-in), and "Retry failed messages" with no failed message.
 */
export function shownActions(m: Migration, step: Step): string[] {
  return actionOrder(m).filter((a) => {
    if (a === 'retry') return m.progress.failed > 0;
    // A choice, not an action: its checkbox is on the Switch step and in the start and finish confirmations.
    if (a === 'keep_reading') return false;
    // New credentials or a sign-in again: from the Connect step too, where the connected mailbox shows no form.
    if (BUTTON_ACTIONS.has(a) || a === 'credentials') return true;
    const target = formStep(m, a);
    // The Connect form (new credentials, a sign-in again, a test) stays open from any later step.
    return target !== step && (target === 'connect' || reachable(m, target));
  });
}

/** Exactly the migration's allowed_actions, each as a button or as a link to its form. */
export function ActionBar(props: { m: Migration; step: Step; onChanged: (m: Migration) => void; reload: () => Promise<void> }) {
  const { m } = props;
  const st = useSourceText();
  const { route } = useLocation();
  const [asking, setAsking] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [probeWait, setProbeWait] = useState<number | null>(null);
  const [keepReading, setKeepReading] = useState(defaultKeepReading(m));
  const path = { migrationId: m.id };
  async function run(action: string, body?: Record<string, unknown>) {
    setBusy(true);
    try {
      if (action === 'delete') {
        await must(api.DELETE('/v1/migrations/{migrationId}', { params: { path } }));
        route('/settings/migrations');
        return;
      }
      if (action === 'probe') {
        const r = await api.POST('/v1/migrations/{migrationId}/probe', { params: { path } });
        if (r.response.status === 429) {
          setProbeWait(Number(r.response.headers.get('retry-after') ?? '60'));
          return;
        }
        await must(Promise.resolve(r));
        setProbeWait(null);
        toast(t('mig.switch.probe_sent'));
        await props.reload();
        return;
      }
      const url = `/v1/migrations/{migrationId}/${action.replace('_', '-')}` as '/v1/migrations/{migrationId}/start';
      const next = await must(api.POST(url, { params: { path }, ...(body ? { body: body as never } : {}) }));
      // A new state shows its own step, not an earlier one opened before.
      route(`/settings/migrations/${m.id}`, true);
      props.onChanged(next as Migration);
      await props.reload();
    } catch (err) {
      toast(t('action.failed', { error: errorText(err) }));
    } finally {
      setBusy(false);
      setAsking(null);
    }
  }
  const shown = shownActions(m, props.step);
  if (shown.length === 0) return <p class="muted mig-actions-none">{t('mig.actions.none')}</p>;
  return (
    <>
      <div class="row-actions mig-actions" role="group" aria-label={t('mig.actions')}>
        {shown.map((a) => {
          if (!BUTTON_ACTIONS.has(a)) {
            const step = formStep(m, a);
            return (
              <a key={a} class="btn btn-ghost" data-action={a} href={`/settings/migrations/${m.id}?step=${step}`}>
                {st(ACTION_KEY(a))}
              </a>
            );
          }
          const danger = DANGER_ACTIONS.has(a);
          const primary = isPrimaryAction(m, a);
          const confirm = danger || a === 'finish' || a === 'start';
          // The first of the destructive actions starts a group of its own, set apart at the end.
          const firstDanger = danger && shown.find((x) => DANGER_ACTIONS.has(x)) === a;
          return (
            <button
              key={a}
              type="button"
              data-action={a}
              disabled={busy}
              class={`btn ${danger ? 'btn-danger' : primary ? 'btn-primary' : ''}${firstDanger ? ' mig-actions-danger' : ''}`}
              onClick={() => {
                // The start's confirmation offers keeping the mailbox read afterwards: on by default when possible.
                if (a === 'start') setKeepReading(defaultKeepReading(m));
                if (confirm) setAsking(a);
                else void run(a);
              }}
            >
              {st(ACTION_KEY(a))}
            </button>
          );
        })}
      </div>
      {probeWait !== null && <RateLimited seconds={probeWait} />}
      {asking === 'cancel' && (
        <Confirm
          title={t('mig.action.cancel')}
          lead={st('mig.cancel.lead')}
          action={t('mig.action.cancel')}
          onClose={() => setAsking(null)}
          onConfirm={() => run('cancel')}
        />
      )}
      {asking === 'delete' && (
        <Confirm
          title={t('mig.action.delete')}
          lead={t('mig.delete.lead')}
          action={t('mig.action.delete')}
          onClose={() => setAsking(null)}
          onConfirm={() => run('delete')}
        />
      )}
      {asking === 'start' && (
        <Confirm
          title={st(ACTION_KEY('start'))}
          lead={startLead(m)}
          action={st(ACTION_KEY('start'))}
          onClose={() => setAsking(null)}
          onConfirm={async () => {
            // The choice to keep reading afterwards, on by default when the channel can read the mailbox.
            if (m.keep_reading?.possible && m.allowed_actions.includes('keep_reading') && keepReading !== m.keep_reading.on) {
              try {
                await must(api.PUT('/v1/migrations/{migrationId}/keep-reading', { params: { path }, body: { keep_reading: keepReading } }));
              } catch (err) {
                toast(t('action.failed', { error: errorText(err) }));
                return;
              }
            }
            await run('start');
          }}
        >
          <KeepReadingBox m={m} checked={keepReading} onChange={setKeepReading} />
        </Confirm>
      )}
      {asking === 'finish' && (
        <FinishDialog
          m={m}
          onClose={() => setAsking(null)}
          onFinish={(force, keepReading) =>
            run(
              'finish',
              force || keepReading !== undefined
                ? { ...(force ? { force: true } : {}), ...(keepReading !== undefined ? { keep_reading: keepReading } : {}) }
                : undefined,
            )
          }
        />
      )}
      {asking === 'remove_history' && (
        <RemoveHistoryDialog m={m} onClose={() => setAsking(null)} onRemoved={(next) => (props.onChanged(next), void props.reload())} />
      )}
    </>
  );
}

/** On by default when the channel can take the mailbox over (it reads none yet). */
const defaultKeepReading = (m: Migration) => !!m.keep_reading && (m.keep_reading.on || (m.keep_reading.possible && !m.keep_reading.channel_reads_a_mailbox));

/** What "Start copying" asks before it starts: the plan's counts, from the last scan. */
function startLead(m: Migration): string {
  const summary = m.plan.summary as PlanSummary | null;
  if (!summary) return t('mig.start.lead_unknown');
  const folders = summary.folders.filter((f) => !f.never_read && f.to_copy > 0).length;
  return t('mig.start.lead', {
    messages: plural('mig.n_messages', summary.to_copy),
    conversations: plural('mig.n_conversations', summary.conversations),
    folders: plural('mig.n_folders', folders),
  });
}
