// Snooze in the panel: the conversation's Snooze control and badge, the timeline line.

export { fromLocalInput, snoozeChoices as laterChoices, wakeText } from './choices';
export { snoozeEventText } from './event-line';
export { SnoozeBadge, SnoozeButton, type SnoozeValue } from './Snooze';
