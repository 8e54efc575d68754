// SLA targets: the card on an inbox's settings page.
export { SlaCard } from './SlaCard';
