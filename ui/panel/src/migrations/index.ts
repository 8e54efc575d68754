// Moving a mailbox or help desk to the service: the wizard (Settings › Move to the service) and the
// credentials-link page. Loaded with settings or the credentials page only, so its strings (the
// largest catalogue) come with it rather than with the first load (see ../strings.ts).
import { addStrings } from '../i18n';
import { migrationEn } from './strings/en';
import { migrationTr } from './strings/tr';

addStrings('en', migrationEn);
addStrings('tr', migrationTr);

export { ConnectMailbox } from './ConnectMailbox';
export { MigrationsPage } from './MigrationsPage';
