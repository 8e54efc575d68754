// The broadcasts feature's part of `svc serve`: the send job and the operator digest.
import { digestJob } from '../operator-digest/service.js';
import type { BackgroundPart } from '../platform/background.js';
import { broadcastSendJob } from './sender.js';

export const broadcastsBackground: BackgroundPart = {
  name: 'broadcasts',
  jobs: (ctx) => [broadcastSendJob(ctx), digestJob(ctx)],
};
