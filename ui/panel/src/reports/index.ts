// Reports (loaded with its charts only when opened: import it lazily).
export { default } from './Reports';
