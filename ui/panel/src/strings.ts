// Every area's strings, added to the catalogues before the app renders (i18n/ imports no area). An
// area loaded only when opened may add its own in its index.ts instead (migrations/: the largest
// catalogue, kept out of the first load).

import { analyticsEn } from './analytics/strings/en';
import { analyticsTr } from './analytics/strings/tr';
import { automationEn } from './automation/strings/en';
import { automationTr } from './automation/strings/tr';
import { contactsEn } from './contacts/strings/en';
import { contactsTr } from './contacts/strings/tr';
import { conversationsEn } from './conversations/strings/en';
import { conversationsTr } from './conversations/strings/tr';
import { customFieldsEn } from './custom-fields/strings/en';
import { customFieldsTr } from './custom-fields/strings/tr';
import { addStrings } from './i18n';
import { mergeEn } from './merge/strings/en';
import { mergeTr } from './merge/strings/tr';
import { notificationsEn } from './notifications/strings/en';
import { notificationsTr } from './notifications/strings/tr';
import { reportsEn } from './reports/strings/en';
import { reportsTr } from './reports/strings/tr';
import { accountEn } from './settings/account/strings/en';
import { accountTr } from './settings/account/strings/tr';
import { apiKeysEn } from './settings/api-keys/strings/en';
import { apiKeysTr } from './settings/api-keys/strings/tr';
import { hoursEn } from './settings/business-hours/strings/en';
import { hoursTr } from './settings/business-hours/strings/tr';
import { inboxSettingsEn } from './settings/inboxes/strings/en';
import { inboxSettingsTr } from './settings/inboxes/strings/tr';
import { membersEn } from './settings/members/strings/en';
import { membersTr } from './settings/members/strings/tr';
import { savedRepliesEn } from './settings/saved-replies/strings/en';
import { savedRepliesTr } from './settings/saved-replies/strings/tr';
import { settingsEn } from './settings/strings/en';
import { settingsTr } from './settings/strings/tr';
import { webhooksEn } from './settings/webhooks/strings/en';
import { webhooksTr } from './settings/webhooks/strings/tr';
import { workspaceSettingsEn } from './settings/workspace/strings/en';
import { workspaceSettingsTr } from './settings/workspace/strings/tr';
import { signInEn } from './sign-in/strings/en';
import { signInTr } from './sign-in/strings/tr';
import { slaEn } from './sla/strings/en';
import { slaTr } from './sla/strings/tr';
import { snoozeEn } from './snooze/strings/en';
import { snoozeTr } from './snooze/strings/tr';
import { teamsEn } from './teams/strings/en';
import { teamsTr } from './teams/strings/tr';

addStrings(
  'en',
  analyticsEn,
  automationEn,
  contactsEn,
  conversationsEn,
  notificationsEn,
  reportsEn,
  settingsEn,
  accountEn,
  apiKeysEn,
  inboxSettingsEn,
  membersEn,
  savedRepliesEn,
  webhooksEn,
  workspaceSettingsEn,
  signInEn,
  snoozeEn,
  mergeEn,
  hoursEn,
  teamsEn,
  slaEn,
  customFieldsEn,
);
addStrings(
  'tr',
  analyticsTr,
  automationTr,
  contactsTr,
  conversationsTr,
  notificationsTr,
  reportsTr,
  settingsTr,
  accountTr,
  apiKeysTr,
  inboxSettingsTr,
  membersTr,
  savedRepliesTr,
  webhooksTr,
  workspaceSettingsTr,
  signInTr,
  snoozeTr,
  mergeTr,
  hoursTr,
  teamsTr,
  slaTr,
  customFieldsTr,
);
