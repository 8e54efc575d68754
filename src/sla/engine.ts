// SLA arithmetic (issue 35), pure: a conversation's targets as a state that moves with what happens
// (a customer's message, the team's reply, a status change, the policy), counted in the inbox's
// business hours (src/business-hours/schedule.ts). "now" is always an argument.
//
// - first response: from the customer's first live message to the team's first reply.
// - next response: from a customer's message after the first response to the team's next reply
//   (time waiting on the customer is outside every cycle, so it never counts).
// - resolution: from the customer's first message to the close; time pending or snoozed is paused
//   (its business time is added to the target), and a reopened conversation starts a new cycle.
// Warnings fall at 80 % of a target's business time; a breach at its due time. Each target keeps
// when it was warned, breached and met, so a notification is sent once per target and cycle.
import { addBusinessMinutes, type BusinessHours, businessMsBetween } from '../business-hours/schedule.js';
import type { SlaTarget } from '../db/schema.js';

export const SLA_TARGETS = ['first_response', 'next_response', 'resolution'] as const satisfies readonly SlaTarget[];
/** The share of a target's time after which the assignee is warned (and the panel's clock turns amber). */
export const WARN_SHARE = 0.8;
/** sla_due_at when nothing is due: sorts after every real time in both dialects. */
export const NOTHING_DUE = '9999-12-31T23:59:59.999Z';

export type Policy = Record<SlaTarget, number | null>;

export interface TargetState {
  started_at: string;
  minutes: number;
  /** Business milliseconds spent paused (resolution while pending or snoozed). */
  paused_ms: number;
  paused_at: string | null;
  /** null while paused, or when the hours never open again. */
  due_at: string | null;
  warn_at: string | null;
  warned_at: string | null;
  breached_at: string | null;
  met_at: string | null;
}

export type SlaState = Record<SlaTarget, TargetState | null> & { responded: boolean };

export interface Outcome {
  target: SlaTarget;
  due_at: string;
  outcome: 'met' | 'breached';
  at: string;
}

/** What moved the conversation; `active`: open and not snoozed; `closed`: status closed. */
export type SlaInput = { kind: 'customer_message'; at: Date } | { kind: 'team_reply'; at: Date } | { kind: 'status'; at: Date } | { kind: 'check'; at: Date };

export interface Situation {
  active: boolean;
  closed: boolean;
  policy: Policy | null;
  hours: BusinessHours;
}

const iso = (d: Date) => d.toISOString();

function plan(hours: BusinessHours, t: TargetState): TargetState {
  if (t.paused_at) return { ...t, due_at: null, warn_at: null };
  const start = new Date(t.started_at);
  const due = addBusinessMinutes(hours, start, t.minutes + t.paused_ms / 60_000);
  const warn = addBusinessMinutes(hours, start, t.minutes * WARN_SHARE + t.paused_ms / 60_000);
  return { ...t, due_at: due ? iso(due) : null, warn_at: warn ? iso(warn) : null };
}

function start(hours: BusinessHours, minutes: number, at: Date): TargetState {
  return plan(hours, {
    started_at: iso(at),
    minutes,
    paused_ms: 0,
    paused_at: null,
    due_at: null,
    warn_at: null,
    warned_at: null,
    breached_at: null,
    met_at: null,
  });
}

const running = (t: TargetState | null): t is TargetState => !!t && !t.met_at;

/** Ends a running target at `at`: met, and a breach first when `at` is past its due time and none was recorded. */
function meet(t: TargetState, target: SlaTarget, at: Date, outcomes: Outcome[]): TargetState {
  const next = { ...t, met_at: iso(at) };
  if (t.due_at && !t.breached_at) {
    if (iso(at) > t.due_at) {
      next.breached_at = t.due_at;
      outcomes.push({ target, due_at: t.due_at, outcome: 'breached', at: t.due_at });
    } else outcomes.push({ target, due_at: t.due_at, outcome: 'met', at: iso(at) });
  }
  return next;
}

/**
 * The state after an input, with the outcomes it ended (met or breached) and the notices due now
 * (a `check` at or after a warning or due time). A conversation without a policy and without a
 * state stays without one; a target the policy drops while it runs stops.
 */
export function advance(
  state: SlaState | null,
  input: SlaInput,
  s: Situation,
): { state: SlaState | null; outcomes: Outcome[]; notices: { target: SlaTarget; kind: 'warning' | 'breached'; due_at: string }[] } {
  const outcomes: Outcome[] = [];
  const notices: { target: SlaTarget; kind: 'warning' | 'breached'; due_at: string }[] = [];
  const at = input.at;
  let st: SlaState | null = state ? { ...state } : null;

  if (input.kind === 'customer_message' && s.policy) {
    if (!st) {
      st = { responded: false, first_response: null, next_response: null, resolution: null };
      if (s.policy.first_response !== null) st.first_response = start(s.hours, s.policy.first_response, at);
      if (s.policy.resolution !== null) st.resolution = start(s.hours, s.policy.resolution, at);
    } else if (st.responded && !running(st.next_response) && s.policy.next_response !== null) {
      st.next_response = start(s.hours, s.policy.next_response, at);
    }
    if (!running(st.resolution) && !s.closed && s.policy.resolution !== null) st.resolution = start(s.hours, s.policy.resolution, at);
  }
  if (!st) return { state: null, outcomes, notices };

  if (input.kind === 'team_reply') {
    st.responded = true;
    if (running(st.first_response)) st.first_response = meet(st.first_response, 'first_response', at, outcomes);
    if (running(st.next_response)) st.next_response = meet(st.next_response, 'next_response', at, outcomes);
  }

  // The policy (another priority, an edited policy) applies to running targets from their start.
  for (const target of SLA_TARGETS) {
    const t = st[target];
    if (!running(t) || t.breached_at || !s.policy) continue;
    const minutes = s.policy[target];
    if (minutes === null) st[target] = null;
    else if (minutes !== t.minutes) st[target] = plan(s.hours, { ...t, minutes, warned_at: null });
  }

  // Resolution: met at the close, paused while pending or snoozed, restarted when reopened.
  const r = st.resolution;
  if (s.closed) {
    if (running(r)) {
      const resumed = r.paused_at ? plan(s.hours, { ...r, paused_at: null }) : r;
      st.resolution = meet(resumed, 'resolution', at, outcomes);
    }
  } else if (!s.active) {
    if (running(r) && !r.paused_at && !r.breached_at) st.resolution = { ...r, paused_at: iso(at), due_at: null, warn_at: null };
  } else if (r?.paused_at) {
    st.resolution = plan(s.hours, { ...r, paused_ms: r.paused_ms + businessMsBetween(s.hours, new Date(r.paused_at), at), paused_at: null });
  } else if (r?.met_at && s.policy?.resolution != null) {
    st.resolution = start(s.hours, s.policy.resolution, at);
  }

  // Warnings and breaches are the check job's (src/sla/service.ts): it notifies what it records.
  if (input.kind === 'check' && !s.closed) {
    for (const target of SLA_TARGETS) {
      const t = st[target];
      if (!running(t) || !t.due_at || t.breached_at) continue;
      if (iso(at) >= t.due_at) {
        st[target] = { ...t, breached_at: t.due_at, warned_at: t.warned_at ?? t.due_at };
        outcomes.push({ target, due_at: t.due_at, outcome: 'breached', at: t.due_at });
        notices.push({ target, kind: 'breached', due_at: t.due_at });
      } else if (t.warn_at && !t.warned_at && iso(at) >= t.warn_at) {
        st[target] = { ...t, warned_at: iso(at) };
        notices.push({ target, kind: 'warning', due_at: t.due_at });
      }
    }
  }
  return { state: st, outcomes, notices };
}

/** The earliest due time of a target not yet met (breached ones first: theirs is past); NOTHING_DUE when none or closed. */
export function sortKey(state: SlaState | null, closed: boolean): string {
  if (!state || closed) return NOTHING_DUE;
  let min = NOTHING_DUE;
  for (const target of SLA_TARGETS) {
    const t = state[target];
    if (running(t) && t.due_at && t.due_at < min) min = t.due_at;
  }
  return min;
}

/** When the check job should look next (a warning or breach to come), or null. */
export function nextCheck(state: SlaState | null, closed: boolean): Date | null {
  if (!state || closed) return null;
  let min: string | null = null;
  for (const target of SLA_TARGETS) {
    const t = state[target];
    if (!running(t) || !t.due_at || t.breached_at) continue;
    const when = !t.warned_at && t.warn_at ? t.warn_at : t.due_at;
    if (!min || when < min) min = when;
  }
  return min ? new Date(min) : null;
}
