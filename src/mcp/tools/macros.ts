// Macros as assistant tools (issue 36): list the macros the key sees (the shared ones) and run one
// on up to 100 conversations — the same service functions as GET /v1/macros and POST
// /v1/macros/{id}/run; the key's scopes and inbox limit apply.
import { z } from 'zod';
import { listMacros, runMacroOnMany } from '../../automation/macros.js';
import { MAX_MACRO_CONVERSATIONS } from '../../automation/schema.js';
import { defineTool } from '../tool.js';

export const macroTools = [
  defineTool({
    name: 'list_macros',
    title: 'Macros',
    description: 'The shared macros: named lists of actions (labels, assignment, status, priority, snooze, saved reply, note, notification, spam, webhook).',
    input: {},
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run(_input, { ctx, access }) {
      return listMacros(ctx, access);
    },
  }),
  defineTool({
    name: 'run_macro',
    title: 'Run a macro',
    description: `Runs a macro (id from list_macros) on up to ${MAX_MACRO_CONVERSATIONS} conversations; each one is reported ok or with its error.`,
    input: {
      macro_id: z.string().min(1).max(100).describe('the macro id (mac_…)'),
      conversation_ids: z.array(z.string().min(1).max(100)).min(1).max(MAX_MACRO_CONVERSATIONS).describe('conversation ids (cv_…)'),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    async run({ macro_id, conversation_ids }, { ctx, access }) {
      return runMacroOnMany(ctx, access, macro_id, conversation_ids);
    },
  }),
];
