// Teams in the panel: the teams' list, their timeline lines, the availability control.
export { AvailabilityControl } from './Availability';
export { autoAssignedText, teamEventText, teamUnassignText } from './event-line';
export { loadTeams, myTeamIds, type Team, teamName, teams } from './state';
