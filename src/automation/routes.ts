// /v1/automation (issue 36): rules, their dry run and the run log — owners and admins (keys with
// workspace:manage). Thin: parse, authorize (in the service, before anything is checked), format.
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type Access, authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, optionalJsonBody } from '../http/openapi.js';
import { pageSchema } from '../http/pagination.js';
import { dryRunRule } from './dry-run.js';
import { createRule, deleteRule, getRule, listRules, updateRule } from './rules.js';
import { listRuns } from './runs.js';
import { DryRunBody, DryRunSchema, MAX_RULES, RuleBody, RulePatch, RuleSchema, RunSchema, RunsQuery } from './schema.js';

const params = z.object({ ruleId: idParam('ruleId', 'rule_01hxyz') });

/** Who calls, refused before the request's ids and body are looked at (authorize first). */
async function manager(c: Context, ctx: Ctx): Promise<Access> {
  const access = await requireAccess(c as never, ctx);
  authorize(access, 'automation:manage');
  return access;
}

export function registerAutomationRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/automation/rules',
      tags: ['automation'],
      summary: 'The workspace’s automation rules, in the order they run (owners and admins)',
      security: bearer,
      responses: { 200: jsonAnswer(pageSchema(RuleSchema), `every rule (at most ${MAX_RULES}); next_cursor is always null`) },
    }),
    async (c) => c.json(await listRules(ctx, await manager(c, ctx)), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/automation/rules',
      tags: ['automation'],
      summary: 'Make a rule (owners and admins)',
      description:
        'A new rule is off unless `enabled` is true: try it first with the dry run. Everything it names (inbox, team, member, saved reply, webhook endpoint) must exist in the workspace, and `matches` patterns must pass the safety rules; problems are 400 invalid_request with `issues`. 409 too_many_rules past 200.',
      security: bearer,
      request: { body: jsonBody(RuleBody) },
      responses: { 201: jsonAnswer(RuleSchema, 'the rule'), 409: { description: 'too_many_rules' } },
    }),
    async (c) => c.json(await createRule(ctx, await manager(c, ctx), c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/automation/rules/{ruleId}',
      tags: ['automation'],
      summary: 'One rule',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(RuleSchema, 'the rule') },
    }),
    async (c) => c.json(await getRule(ctx, await manager(c, ctx), c.req.valid('param').ruleId), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/automation/rules/{ruleId}',
      tags: ['automation'],
      summary: 'Change a rule; `position` moves it (the others shift)',
      security: bearer,
      request: { params, body: jsonBody(RulePatch) },
      responses: { 200: jsonAnswer(RuleSchema, 'the rule as it is now') },
    }),
    async (c) => c.json(await updateRule(ctx, await manager(c, ctx), c.req.valid('param').ruleId, c.req.valid('json')), 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/automation/rules/{ruleId}',
      tags: ['automation'],
      summary: 'Delete a rule (its run log stays until it ages out)',
      security: bearer,
      request: { params },
      responses: { 204: { description: 'deleted' } },
    }),
    async (c) => {
      await deleteRule(ctx, await manager(c, ctx), c.req.valid('param').ruleId);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/automation/rules/{ruleId}/dry-run',
      tags: ['automation'],
      summary: 'What the rule would have done to the conversations of the last N days (nothing changes)',
      description:
        'Evaluates the rule (enabled or not) against every live conversation created in the last `days` days (imported and spam ones are left out, as a real run leaves them out), as each stands now, with the same conditions and the same action logic as a real run: an action counts when it would change something.',
      security: bearer,
      request: { params, body: optionalJsonBody(DryRunBody) },
      responses: { 200: jsonAnswer(DryRunSchema, 'what it would have done') },
    }),
    async (c) => {
      const access = await manager(c, ctx);
      const b = c.req.valid('json') ?? {};
      return c.json(await dryRunRule(ctx, access, c.req.valid('param').ruleId, { days: b.days, limitExamples: b.limit_examples }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/automation/runs',
      tags: ['automation'],
      summary: 'The run log, newest first (kept 30 days)',
      description: 'One entry per rule that looked at a conversation: acted (with the actions that changed something), no_match or skipped, with the reason.',
      security: bearer,
      request: { query: RunsQuery },
      responses: { 200: jsonAnswer(pageSchema(RunSchema), 'a page of runs') },
    }),
    async (c) => {
      const access = await manager(c, ctx);
      const q = c.req.valid('query');
      return c.json(await listRuns(ctx, access, { ruleId: q.rule_id, conversationId: q.conversation_id, limit: q.limit, cursor: q.cursor }), 200);
    },
  );
}
