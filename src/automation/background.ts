// Automation's part of `svc serve`: the jobs that run rules after an event and when a state lasted.
import type { BackgroundPart } from '../platform/background.js';
import { automationJobs } from './engine.js';

export const automationBackground: BackgroundPart = { name: 'automation', jobs: (ctx) => automationJobs(ctx) };
