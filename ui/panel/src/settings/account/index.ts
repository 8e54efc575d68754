export { Account } from './Account';
