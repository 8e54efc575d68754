// Table types of src/events beside the events table itself (tables/core.ts): the reaction settings
// epoch (migration 0026).

/**
 * One row (id 1) whose `epoch` triggers move in the transaction of any change to what the event
 * reactions read for every event (webhook endpoints' filters, inbox greetings); their cached
 * answers (src/events/settings-cache.ts) hold only while it stays the same.
 */
export interface ReactionSettingsEpochTable {
  id: number;
  epoch: number;
}

export interface EventTables {
  reaction_settings_epoch: ReactionSettingsEpochTable;
}
