// Business hours per inbox (migration 0041).

export interface InboxHoursTable {
  inbox_id: string;
  workspace_id: string;
  /** JSON { mon: [{start,end}], … } on the inbox's wall clock; null: no schedule (always open). */
  weekly: string | null;
  /** JSON [{ date: 'YYYY-MM-DD', intervals: [{start,end}] }] (an empty list closes the day). */
  exceptions: string;
  updated_at: string;
}

export interface BusinessHoursTables {
  inbox_hours: InboxHoursTable;
}
