// Analytics in `svc serve`: the monthly-limit notices (mail to the owners, a line in the operator
// digest) and the event buffer's flush when the server stops.
import type { Ctx } from '../context.js';
import { ownerIdsOf } from '../members/store.js';
import { addDigestLine } from '../operator-digest/service.js';
import { findPersonById } from '../people/service.js';
import type { BackgroundPart } from '../platform/background.js';
import type { JobKind } from '../platform/jobs.js';
import { rollupJob } from './reports.js';
import { ingestionOf } from './runtime.js';
import { LIMIT_NOTICE_JOB } from './writer.js';

interface Notice {
  workspaceId: string;
  month: string;
  level: 80 | 100;
  events: number;
  limit: number;
}

const TEXTS = {
  en: {
    subject: (n: Notice) => `Web analytics: ${n.level} % of this month’s events used`,
    body: (n: Notice, url: string) =>
      [
        `Your workspace has counted ${n.events} of its ${n.limit} analytics events for ${n.month} (UTC).`,
        n.level === 100
          ? 'Events are still counted up to 110 % of the limit; after that pageviews are not counted until the next month begins. Conversations are never affected.'
          : 'At 110 % of the limit pageviews stop being counted until the next month begins. Conversations are never affected.',
        '',
        `The dashboard stays open: ${url}/analytics`,
      ].join('\n'),
  },
  tr: {
    subject: (n: Notice) => `Web analitiği: bu ayın olaylarının %${n.level} kadarı kullanıldı`,
    body: (n: Notice, url: string) =>
      [
        `Çalışma alanınız ${n.month} (UTC) için ${n.limit} analitik olayından ${n.events} tanesini saydı.`,
        n.level === 100
          ? 'Olaylar sınırın %110’una kadar sayılmaya devam eder; sonra sayfa görüntülemeleri gelecek ay başlayana dek sayılmaz. Konuşmalar hiç etkilenmez.'
          : 'Sınırın %110’unda sayfa görüntülemeleri gelecek ay başlayana dek sayılmaz. Konuşmalar hiç etkilenmez.',
        '',
        `Pano açık kalır: ${url}/analytics`,
      ].join('\n'),
  },
};

function limitNoticeJob(ctx: Ctx): JobKind<Notice> {
  return {
    kind: LIMIT_NOTICE_JOB,
    async run(n) {
      for (const personId of await ownerIdsOf(ctx.db, n.workspaceId)) {
        const person = await findPersonById(ctx, personId);
        if (!person) continue;
        const t = person.locale === 'tr' ? TEXTS.tr : TEXTS.en;
        await ctx.systemMail.send(
          { to: person.email, subject: t.subject(n), text: t.body(n, ctx.config.publicUrl), headers: { 'Auto-Submitted': 'auto-generated' } },
          'analytics limit',
        );
      }
      await addDigestLine(ctx, {
        kind: 'analytics_limit',
        workspaceId: n.workspaceId,
        text: `workspace ${n.workspaceId} used ${n.level} % of its analytics limit (${n.events} of ${n.limit} events in ${n.month})`,
      });
    },
  };
}

export const analyticsBackground: BackgroundPart = {
  name: 'analytics',
  jobs: (ctx) => [limitNoticeJob(ctx), rollupJob(ctx)],
  async start(ctx) {
    const ingestion = ingestionOf(ctx);
    ingestion.geo.start();
    return {
      stop: async () => {
        ingestion.geo.stop();
        await ingestion.writer.close();
      },
    };
  },
};
