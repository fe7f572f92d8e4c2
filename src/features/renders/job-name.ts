/** The durable job that turns a queued render into outputs. */
export const RENDER_JOB = 'templates.render';

/** Rendering itself is deterministic and never retried; attempts cover storage hiccups. */
export const RENDER_JOB_MAX_ATTEMPTS = 5;
