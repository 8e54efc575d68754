// SLA's part of `svc serve`: the job that warns before and at a breach.
import type { BackgroundPart } from '../platform/background.js';
import { slaCheckJob } from './service.js';

export const slaBackground: BackgroundPart = { name: 'sla', jobs: (ctx) => [slaCheckJob(ctx)] };
