// Contacts: the strings in English. tr.ts has the same keys (test/panel/strings.test.ts checks it).
export const contactsEn = {
  'details.attributes': 'Attributes',
  'contact.edit': 'Edit contact',
  'contact.emails': 'E-mail addresses, one per line',
  'contact.saved': 'Contact saved',
  'attr.add': 'Add attribute',
  'attr.none': 'No attributes yet.',
  'attr.key': 'Attribute name',
  'attr.value': 'Value',
  'attr.type': 'Type',
  'attr.type_text': 'Text',
  'attr.type_number': 'Number',
  'attr.type_bool': 'Yes/no',
  'attr.yes': 'Yes',
  'attr.no': 'No',
  'attr.edit': 'Edit {key}',
  'attr.remove': 'Remove {key}',
  'attr.removed': '{key} removed',
  'attr.cancel': 'Cancel',
  'attr.bad_key': 'Give the attribute a name of up to 64 characters.',
  'attr.bad_number': 'Enter a number, such as 42 or 9.5.',
  'attr.bad_text': 'Text is at most 1,000 characters.',
  'attr.structured': 'Structured value (change it through the API)',
  'contact.unverified': 'Unverified',
  'contact.unverified_hint': 'Typed in the chat and not proven. Confirm it only once you know it is theirs.',
  'contact.unverified_owned': 'Typed in the chat and not proven. This address belongs to {name}.',
  'contact.unverified_merge': 'Merge into {name}',
  'contact.unverified_confirm': 'Confirm address',
} as const;

declare module '../../i18n' {
  interface Messages extends Record<keyof typeof contactsEn, string> {}
}
