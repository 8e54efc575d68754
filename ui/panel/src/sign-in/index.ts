// Signing in: the code form, passkeys, sign-in links and invites.
export { AcceptInvite, SignInLink } from './Links';
export { SignIn } from './SignIn';
