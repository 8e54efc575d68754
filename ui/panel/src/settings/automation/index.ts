export { AutomationSettings } from './AutomationSettings';
