// Contacts: the contact card and its dialogs beside a conversation (the contacts pages load lazily from ./pages).
export { ContactCard } from './ContactCard';
export { contactName, DeleteContactDialog, MergeDialog } from './ContactDialogs';
