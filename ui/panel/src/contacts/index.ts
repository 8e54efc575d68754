// Contacts: the contact card shown beside a conversation.
export { ContactCard } from './ContactCard';
