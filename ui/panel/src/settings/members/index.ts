export { Members } from './Members';
