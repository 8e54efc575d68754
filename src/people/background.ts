// The people feature's part of `svc serve`: the job that makes and mails sign-in codes.
import type { BackgroundPart } from '../platform/background.js';
import { signInCodeJob } from './service.js';

export const peopleBackground: BackgroundPart = { name: 'people', jobs: (ctx) => [signInCodeJob(ctx)] };
