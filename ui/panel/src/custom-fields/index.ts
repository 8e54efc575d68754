// Custom fields in the panel: the definitions, the editor of a conversation's or contact's values,
// and the explanation when closing is refused for an empty required field.
export { CustomFieldsEditor } from './FieldsEditor';
export { type CustomField, closeRefused, customFieldEventText, customFields, isCloseRefusal, loadCustomFields, missingRequired } from './state';
