// Business hours: the card on an inbox's settings page.
export { BusinessHoursCard } from './HoursCard';
