// Merges and splits of conversations (migration 0045; src/conversations/merge.ts, split.ts).

/** One merge or split, with exactly the rows it moved (what an undo moves back). */
export interface ConversationMovesTable {
  id: string;
  workspace_id: string;
  kind: 'merge' | 'split';
  /** The conversation the rows left (a merge's stub; a split's original). */
  source_id: string;
  /** Where they went (a merge's target; a split's new conversation). */
  target_id: string;
  /** JSON `MovedRows` (src/conversations/merge.ts). */
  moved: string;
  person_id: string | null;
  key_id: string | null;
  created_at: string;
  /** When the merge was undone; null while it stands. */
  undone_at: string | null;
}

export interface ConversationMoveTables {
  conversation_moves: ConversationMovesTable;
}
