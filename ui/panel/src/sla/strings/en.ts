// SLA: the strings in English (the clock and the inbox's SLA settings). tr.ts has the same keys.
export const slaEn = {
  'sla.left': '{span} left',
  'sla.over': '{span} over',
  'sla.clock_title': '{target} due {when}',
  'sla.unit.d': 'd',
  'sla.unit.h': 'h',
  'sla.unit.m': 'm',
  'sla.target.first_response': 'First response',
  'sla.target.next_response': 'Next response',
  'sla.target.resolution': 'Resolution',
  'sla.title': 'SLA targets',
  'sla.lead':
    'How soon the team answers and resolves, counted in this inbox’s business hours. Time pending or snoozed does not count toward resolution, and time waiting on the customer never counts. Leave a field empty to not track it.',
  'sla.minutes': 'minutes',
  'sla.row.default': 'Every conversation',
  'sla.row.priority': 'Priority: {priority}',
  'sla.row.priority_hint': 'Empty row: the targets above apply.',
  'sla.by_priority': 'Other targets per priority',
  'sla.save': 'Save SLA targets',
  'sla.none': 'No SLA yet: set a target to start the clocks.',
} as const;

declare module '../../i18n' {
  interface Messages extends Record<keyof typeof slaEn, string> {}
}
