// A migration's state as a pill, and the wizard's eight steps with the current one marked.

import type { MessageKey } from '../i18n';
import { t } from '../i18n';
import { type Migration, reachable, STATE_KEY, STEPS, type State, type Step, useSourceText } from './model';

export function StatePill(props: { state: State }) {
  const st = useSourceText();
  const bad = props.state === 'needs_attention' || props.state === 'cancelled';
  const ok = props.state === 'completed' || props.state === 'syncing' || props.state === 'copying';
  return (
    <span class={`mig-state ${bad ? 'pill-bad' : ok ? 'pill-ok' : ''}`} data-state={props.state}>
      {st(STATE_KEY(props.state))}
    </span>
  );
}

export function Stepper(props: { current: Step; migration: Migration | null }) {
  return (
    <nav aria-label={t('mig.steps')}>
      <ol class="mig-steps">
        {STEPS.map((s, i) => {
          const here = s === props.current;
          const link = props.migration && !here && reachable(props.migration, s);
          const label = (
            <>
              <span class="mig-step-n" aria-hidden="true">
                {i + 1}
              </span>
              <span>{t(`mig.step.${s}` as MessageKey)}</span>
            </>
          );
          return (
            <li key={s} class={here ? 'mig-step current' : 'mig-step'} aria-current={here ? 'step' : undefined}>
              {link ? <a href={`/settings/migrations/${props.migration!.id}?step=${s}`}>{label}</a> : label}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}
