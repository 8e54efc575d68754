export { TeamsSettings } from './Teams';
