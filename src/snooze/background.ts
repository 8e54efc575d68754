// Snooze's part of `svc serve`: the job that wakes snoozed conversations.
import type { BackgroundPart } from '../platform/background.js';
import { snoozeWakeJob } from './service.js';

export const snoozeBackground: BackgroundPart = { name: 'snooze', jobs: (ctx) => [snoozeWakeJob(ctx)] };
