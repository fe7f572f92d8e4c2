/** The one-line summary and the description of an API operation (src/http/operation-docs.ts). */
export interface OperationDoc {
  summary: string;
  description: string;
}

/** The sentence every paged list's description ends with. */
export const PAGED = 'Paged with `limit` (1..200, default 50) and the opaque `cursor` from `next_cursor`.';
