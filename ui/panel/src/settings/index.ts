// Settings: one section per folder here, each at /settings/<section>.
export { Settings } from './Settings';
