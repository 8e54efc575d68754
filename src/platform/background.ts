// What a feature adds to the background table (src/server/background.ts): its job kinds and the
// long-running listeners `svc serve` starts. The types live here, below the features, so that a
// feature's background part does not import the table that lists it.
import type { Ctx } from '../context.js';
import type { JobKind } from './jobs.js';

export interface RunningPart {
  stop(): Promise<void>;
  /** Extra fields for the "listening" log line (for example the SMTP port). */
  info?: Record<string, unknown>;
}

export interface BackgroundPart {
  name: string;
  jobs?(ctx: Ctx): JobKind[];
  /** Started after migrations, before the HTTP listener opens. */
  start?(ctx: Ctx): Promise<RunningPart | void>;
}
