// The command palette: a filter over commands, also the shape of the macro picker.
export { type Command, CommandPalette, matches } from './CommandPalette';
