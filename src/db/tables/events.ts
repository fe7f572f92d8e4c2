/** The final home of tracked events, read by the analysis. */
export interface EventsTable {
  /** ULID assigned when the event was acknowledged, so id order is receipt order. */
  id: string;
  workspace_id: string;
  unit_id: string;
  event_key: string;
  /** JSON text of the properties object. */
  properties: string;
  occurred_at: number;
  received_at: number;
  /** 1 when the event arrived 7 to 30 days after it occurred. */
  late: number;
  /** Unique per workspace when set. */
  client_event_id: string | null;
}

/** Embedded buffer: acknowledged events not yet drained, one row per committed group chunk. */
export interface EventBufferTable {
  id: string;
  event_count: number;
  /** JSON array of the chunk's event rows. */
  payload: string;
  created_at: number;
}

/** Embedded buffer: the client_event_ids acknowledged within the de-duplication window. */
export interface EventDedupeTable {
  workspace_id: string;
  client_event_id: string;
  expires_at: number;
}

export interface EventTables {
  events: EventsTable;
  event_buffer: EventBufferTable;
  event_dedupe: EventDedupeTable;
}
