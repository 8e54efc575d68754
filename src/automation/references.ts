// What a rule or macro names must exist in the workspace: inboxes, teams, members, saved replies,
// webhook endpoints; and every `matches` pattern must be safe (./pattern.ts). Problems are 400
// invalid_request with one entry per problem in `issues` (the path of the field).
import { fieldsOfObject } from '../custom-fields/store.js';
import { checkValue } from '../custom-fields/values.js';
import type { Db } from '../db/schema.js';
import { findLiveInbox } from '../inboxes/store.js';
import { isMemberOf } from '../members/store.js';
import { invalid } from '../platform/errors.js';
import { findSavedReply } from '../saved-replies/service.js';
import { findTeam } from '../teams/store.js';
import { findEndpoint } from '../webhooks/service.js';
import { patternProblem } from './pattern.js';
import type { Action, Condition } from './schema.js';

type Issue = { path: (string | number)[]; message: string };

export async function checkReferences(
  db: Db,
  workspaceId: string,
  input: { conditions?: readonly Condition[]; actions?: readonly Action[]; ownerPersonId?: string | null },
): Promise<void> {
  const issues: Issue[] = [];
  const fields =
    (input.conditions ?? []).some((c) => c.field === 'custom_field') || (input.actions ?? []).some((a) => a.type === 'set_custom_field')
      ? await fieldsOfObject(db, workspaceId, 'conversation')
      : [];
  const fieldOf = (key: string) => fields.find((f) => f.key === key);
  for (const [i, c] of (input.conditions ?? []).entries()) {
    const path = ['conditions', 'items', i, 'value'];
    if ((c.field === 'subject' || c.field === 'body') && c.operator === 'matches') {
      const problem = patternProblem(c.value);
      if (problem) issues.push({ path, message: problem });
    }
    if (c.field === 'inbox_id' && !(await findLiveInbox(db, workspaceId, c.value))) issues.push({ path, message: 'not an inbox of this workspace' });
    if (c.field === 'assignee_id' && c.operator !== 'unassigned') {
      if (!c.value) issues.push({ path, message: 'a member id is needed' });
      else if (!(await isMemberOf(db, workspaceId, c.value))) issues.push({ path, message: 'not a member of this workspace' });
    }
    if (c.field === 'team_id' && c.operator !== 'none') {
      if (!c.value) issues.push({ path, message: 'a team id is needed' });
      else if (!(await findTeam(db, workspaceId, c.value))) issues.push({ path, message: 'not a team of this workspace' });
    }
    if (c.field === 'contact_attribute' && c.operator !== 'exists' && c.value === undefined) issues.push({ path, message: 'a value is needed' });
    if (c.field === 'custom_field') {
      const field = fieldOf(c.key);
      if (!field) issues.push({ path: ['conditions', 'items', i, 'key'], message: 'not a conversation custom field of this workspace' });
      else if ((c.operator === 'is' || c.operator === 'is_not') && (c.value === undefined || (field.options && !field.options.includes(String(c.value)))))
        issues.push({ path, message: field.options ? `one of: ${field.options.join(', ')}` : 'a value is needed' });
    }
    if (
      (c.field === 'sender_email' || c.field === 'sender_domain' || ((c.field === 'subject' || c.field === 'body') && c.operator !== 'matches')) &&
      !c.value.trim()
    )
      issues.push({ path, message: 'must not be empty' });
  }
  for (const [i, a] of (input.actions ?? []).entries()) {
    const at = (field: string) => ['actions', i, field];
    if (a.type === 'assign_member' && !(await isMemberOf(db, workspaceId, a.member_id)))
      issues.push({ path: at('member_id'), message: 'not a member of this workspace' });
    if (a.type === 'assign_team' && !(await findTeam(db, workspaceId, a.team_id)))
      issues.push({ path: at('team_id'), message: 'not a team of this workspace' });
    if (a.type === 'send_saved_reply') {
      const reply = await findSavedReply(db, workspaceId, a.saved_reply_id);
      const usable = reply && (reply.scope === 'workspace' || (input.ownerPersonId && reply.owner_id === input.ownerPersonId));
      if (!usable) issues.push({ path: at('saved_reply_id'), message: 'not a saved reply of this workspace (rules use workspace replies)' });
    }
    if (a.type === 'notify_members')
      for (const [j, m] of a.member_ids.entries())
        if (!(await isMemberOf(db, workspaceId, m))) issues.push({ path: ['actions', i, 'member_ids', j], message: 'not a member of this workspace' });
    if (a.type === 'set_custom_field') {
      const field = fieldOf(a.key);
      const problem = !field ? 'not a conversation custom field of this workspace' : a.value === null ? null : checkValue(field, a.value);
      if (typeof problem === 'string') issues.push({ path: at(field ? 'value' : 'key'), message: problem });
    }
    if (a.type === 'send_webhook' && !(await findEndpoint(db, workspaceId, a.endpoint_id)))
      issues.push({ path: at('endpoint_id'), message: 'not a webhook endpoint of this workspace' });
    if ((a.type === 'add_label' || a.type === 'remove_label') && !a.label.trim()) issues.push({ path: at('label'), message: 'must not be empty' });
  }
  if (issues.length) throw invalid(`${issues[0].path.join('.')}: ${issues[0].message}`, { issues });
}
