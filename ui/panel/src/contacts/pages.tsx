// The contacts pages (/contacts and /contacts/:id), loaded only when opened.
import '../styles/contacts.css';
import { useRoute } from 'preact-iso';
import { ContactPage } from './ContactPage';
import { ContactsPage } from './ContactsPage';

export default function Contacts() {
  const { params } = useRoute();
  return params.id ? <ContactPage /> : <ContactsPage />;
}
