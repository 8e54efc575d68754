// Web analytics: the visit card of a conversation's details, and the dashboard page (loaded lazily,
// with its charts, only when opened).
import { lazy } from 'preact-iso';

export { type ConversationVisit, VisitCard } from './VisitCard';
export const AnalyticsPage = lazy(() => import('./Dashboard'));
