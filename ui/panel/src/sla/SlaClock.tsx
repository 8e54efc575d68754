// The SLA clock badge (list rows and the conversation's header): "2h 10m left", amber in the last
// 20 %, red when breached, the target and its due time named on hover. Never more colour than that.
import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { absoluteTime, t } from '../i18n';
import { type ConversationSla, slaClock, spanText } from './clock';
import './sla.css';

/** One ticking "now" for every clock on the page (a minute is the finest a clock shows). */
const now = signal(Date.now());
let users = 0;
let timer: ReturnType<typeof setInterval> | undefined;
function useTick() {
  useEffect(() => {
    users++;
    if (!timer) timer = setInterval(() => (now.value = Date.now()), 30_000);
    return () => {
      users--;
      if (!users && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    };
  }, []);
}

export function SlaClock(props: { sla: ConversationSla }) {
  useTick();
  const clock = slaClock(props.sla, now.value);
  if (!clock) return null;
  const units = { d: t('sla.unit.d'), h: t('sla.unit.h'), m: t('sla.unit.m') };
  const span = spanText(clock.left, units);
  const text = clock.state === 'breached' ? t('sla.over', { span }) : t('sla.left', { span });
  const title = t('sla.clock_title', { target: t(`sla.target.${clock.target}`), when: absoluteTime(clock.due) });
  return (
    <span class={`badge sla-clock sla-${clock.state}`} title={title} data-sla={clock.state}>
      <svg aria-hidden="true" viewBox="0 0 16 16" width="12" height="12">
        <circle cx="8" cy="8" r="6.5" fill="none" stroke="currentColor" stroke-width="1.5" />
        <path d="M8 4.5V8l2.5 1.5" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round" />
      </svg>
      <span class="visually-hidden">{title}: </span>
      {text}
    </span>
  );
}
