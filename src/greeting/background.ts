// The greeting's part of `svc serve`: the job that checks the rules and writes the greeting.
import type { BackgroundPart } from '../platform/background.js';
import { greetingJob } from './service.js';

export const greetingBackground: BackgroundPart = { name: 'greeting', jobs: (ctx) => [greetingJob(ctx)] };
