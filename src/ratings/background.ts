// The ratings feature's part of `svc serve`: the job that mails rating requests.
import type { BackgroundPart } from '../platform/background.js';
import { ratingRequestJob } from './service.js';

export const ratingsBackground: BackgroundPart = { name: 'ratings', jobs: (ctx) => [ratingRequestJob(ctx)] };
