// Moving a mailbox or help desk to the service: the wizard (Settings › Move to the service) and the
// credentials-link page.
export { ConnectMailbox } from './ConnectMailbox';
export { MigrationsPage } from './MigrationsPage';
