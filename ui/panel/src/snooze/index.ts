// Snooze in the panel: the conversation's Snooze control and badge, the timeline line.

export { wakeText } from './choices';
export { snoozeEventText } from './event-line';
export { SnoozeBadge, SnoozeButton, type SnoozeValue, TimeChoices } from './Snooze';
