// The greeting's part of `svc serve`: the jobs that check the rules and write the greeting or the away reply.
import type { BackgroundPart } from '../platform/background.js';
import { awayReplyJob } from './away.js';
import { greetingJob } from './service.js';

export const greetingBackground: BackgroundPart = { name: 'greeting', jobs: (ctx) => [greetingJob(ctx), awayReplyJob(ctx)] };
