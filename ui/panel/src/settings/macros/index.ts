export { MacrosSettings } from './MacrosSettings';
