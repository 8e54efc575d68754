export { CustomFieldsSettings } from './CustomFieldsSettings';
