// Timeline lines about teams and auto-assignment (issue 36).
import { t } from '../i18n';
import { teamName } from './state';

type Change = { from: unknown; to: unknown };

/** A team change: joined or left, and why when the server says. */
export function teamEventText(change: Change, reason: string | undefined): string {
  if (change.to === null) return reason === 'team_deleted' ? t('teams.event_deleted') : t('teams.event_left');
  return t('teams.event_set', { team: teamName(change.to, t('teams.event_other')) });
}

/** An unassignment the server made for a team's sake, or null. */
export function teamUnassignText(reason: string | undefined): string | null {
  return reason === 'team_member_removed' ? t('teams.event_member_removed') : null;
}

/** Said after an auto-assignment's changes. */
export function autoAssignedText(reason: string | undefined): string | null {
  return reason === 'auto_assignment' ? t('teams.event_auto') : null;
}
