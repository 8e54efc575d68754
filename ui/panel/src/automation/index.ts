// Automation rules and macros in the panel: the shapes, the pickers' data, plain-words descriptions,
// the actions builder (rules and macros share it) and running macros on conversations.
export { ActionsBuilder } from './ActionsBuilder';
export { CustomFieldKey, CustomFieldValueInput, conversationFields } from './CustomFieldInputs';
export { describeAction, describeActions, describeReported, describeSummary, describeTrigger } from './describe';
export { MacroBulkButton, MacroMenu, MacroPicker, macroCommands } from './MacroMenu';
export { loadMacros, macros, runMacro, runMacroOn } from './macros';
export * from './model';
export { endpoints, inboxOptions, labelSuggestions, loadOptions, memberOptions, nameOf, optionsLoaded, savedReplies, teamOptions } from './options';
