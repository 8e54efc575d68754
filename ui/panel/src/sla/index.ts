// SLA in the panel: the clock badge of list rows and the conversation's header.
export { type ClockState, type ConversationSla, slaClock, spanText } from './clock';
export { SlaClock } from './SlaClock';
