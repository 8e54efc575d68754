export { ApiKeys } from './ApiKeys';
