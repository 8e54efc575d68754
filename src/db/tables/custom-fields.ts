// Custom fields (migration 0055): typed fields a workspace defines for its conversations and its
// contacts, and their values (one row per value; a multi-select has one row per chosen option).

export type CustomFieldObject = 'conversation' | 'contact';
export type CustomFieldType = 'text' | 'number' | 'date' | 'single_select' | 'multi_select' | 'checkbox' | 'link';

export interface CustomFieldsTable {
  id: string;
  workspace_id: string;
  object: CustomFieldObject;
  /** A stable slug, unique per workspace and object: the key in `custom_fields` objects. */
  key: string;
  label: string;
  type: CustomFieldType;
  /** JSON array of the choices of a select; null for other types. */
  options: string | null;
  /** 0/1: a conversation may not be closed while this field is empty (conversation fields only). */
  required_before_closing: number;
  position: number;
  created_at: string;
  updated_at: string;
}

export interface CustomFieldValuesTable {
  field_id: string;
  /** The conversation's or the contact's id. */
  owner_id: string;
  /** 0 for single values; a multi-select's options are 0, 1, … in the order chosen. */
  item: number;
  workspace_id: string;
  /** text, date (YYYY-MM-DD), single and multi select, link. */
  value_text: string | null;
  /** number; checkbox as 0/1. */
  value_number: number | null;
}

export interface CustomFieldsTables {
  custom_fields: CustomFieldsTable;
  custom_field_values: CustomFieldValuesTable;
}
