// What the SLA clock shows for a conversation: its most urgent target not yet met (the earliest due
// time), and whether it is in time, in its last 20 % (amber: past warn_at, which the server counts
// in business hours) or breached (red). Pure, so the list and the header agree and tests can call it.
export type SlaTargetName = 'first_response' | 'next_response' | 'resolution';
type TargetState = { due_at: string | null; warn_at: string | null; breached_at: string | null; met_at: string | null; paused: boolean } | null;
export type ConversationSla = Record<SlaTargetName, TargetState> | null | undefined;

export interface ClockState {
  target: SlaTargetName;
  due: string;
  state: 'ok' | 'warn' | 'breached';
  /** Milliseconds until due (negative when past). */
  left: number;
}

const TARGETS: SlaTargetName[] = ['first_response', 'next_response', 'resolution'];

export function slaClock(sla: ConversationSla, now: number): ClockState | null {
  if (!sla) return null;
  let best: ClockState | null = null;
  for (const target of TARGETS) {
    const t = sla[target];
    if (!t || t.met_at || !t.due_at || t.paused) continue;
    if (best && best.due <= t.due_at) continue;
    const due = Date.parse(t.due_at);
    const state = t.breached_at || now >= due ? 'breached' : t.warn_at && now >= Date.parse(t.warn_at) ? 'warn' : 'ok';
    best = { target, due: t.due_at, state, left: due - now };
  }
  return best;
}

/** "2h 10m", "3d 4h", "45m" (units from the catalogue). */
export function spanText(ms: number, units: { d: string; h: string; m: string }): string {
  const minutes = Math.max(1, Math.round(Math.abs(ms) / 60_000));
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  if (d) return h ? `${d}${units.d} ${h}${units.h}` : `${d}${units.d}`;
  if (h) return m ? `${h}${units.h} ${m}${units.m}` : `${h}${units.h}`;
  return `${m}${units.m}`;
}
