export interface TemplatesTable {
  id: string;
  workspace_id: string;
  name: string;
  /** The mutable draft (Handlebars over Markdown). */
  body: string;
  /** How many versions were frozen; the latest label is `v{version_count}`. */
  version_count: number;
  created_at: number;
  updated_at: number;
  /** Soft delete: the draft is gone for the API, its versions stay renderable. */
  deleted_at: number | null;
}

/** Immutable once inserted: no code path updates a row of this table. */
export interface TemplateVersionsTable {
  template_id: string;
  seq: number;
  workspace_id: string;
  label: string;
  body_snapshot: string;
  /** JSON Schema (2020-12) as JSON text. */
  fields_schema: string;
  created_at: number;
}

export type RenderStatus = 'queued' | 'running' | 'resolved' | 'failed';
export type RenderFormat = 'html' | 'text' | 'markdown' | 'pdf';

export interface RendersTable {
  id: string;
  workspace_id: string;
  template_id: string;
  version_seq: number;
  version_label: string;
  /** RenderFormat[] as JSON text, in the order requested. */
  formats: string;
  /** The merge data as JSON text. */
  data: string;
  status: RenderStatus;
  error: string | null;
  created_at: number;
  updated_at: number;
  /** When it reached resolved or failed. */
  resolved_at: number | null;
}

export interface RenderOutputsTable {
  render_id: string;
  format: RenderFormat;
  content_type: string;
  content: Buffer;
  byte_size: number;
  created_at: number;
}

export interface TemplateTables {
  templates: TemplatesTable;
  template_versions: TemplateVersionsTable;
  renders: RendersTable;
  render_outputs: RenderOutputsTable;
}
