// A failure at one step of reaching a migration's mailbox (its own module so that the sign-in
// providers' token handling and connect.ts can both use it without importing each other).
import type { classifyImapError } from './imap.js';

export type TestStep = 'dns' | 'connect' | 'tls' | 'login' | 'permission' | 'list';

/** 'sign_in': the provider no longer accepts the sign-in (a new one is needed). */
export type SourceFailure = ReturnType<typeof classifyImapError> | 'address' | 'sign_in';

/** A failure at one step of reaching the mailbox. */
export class SourceError extends Error {
  constructor(
    readonly step: TestStep,
    message: string,
    readonly failure: SourceFailure = 'connect',
  ) {
    super(message);
  }
}
