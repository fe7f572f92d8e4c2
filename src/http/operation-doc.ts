/** The one-line summary and the description of an API operation (src/http/operation-docs.ts). */
export interface OperationDoc {
  summary: string;
  description: string;
}
