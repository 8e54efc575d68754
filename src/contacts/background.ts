// The contacts feature's part of `svc serve`: the CSV import job.
import type { BackgroundPart } from '../platform/background.js';
import { contactImportJob } from './imports.js';

export const contactsBackground: BackgroundPart = {
  name: 'contacts',
  jobs: (ctx) => [contactImportJob(ctx)],
};
