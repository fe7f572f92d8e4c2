// The one way the UI talks to the server: same-origin fetch with the session cookie, JSON in
// and out, the CSRF token on every state-changing request, and problems turned into errors.

import { plainMessage } from './validation-words.js';

export interface FieldError {
  pointer?: string;
  parameter?: string;
  message: string;
}

export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail?: string;
  errors?: FieldError[];
}

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail ?? problem.title);
    this.status = problem.status;
    this.problem = problem;
  }
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

let csrfToken: string | null = null;
let onUnauthorized: (message: string) => void = () => undefined;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the session stops working (expired, signed out elsewhere, key revoked). */
export function onSessionLost(handler: (message: string) => void): void {
  onUnauthorized = handler;
}

async function problemOf(response: Response): Promise<Problem> {
  try {
    const body = (await response.json()) as Problem;
    if (body && typeof body.title === 'string') return body;
  } catch {
    // not JSON: fall through to a generic problem
  }
  return { title: response.statusText || 'Request failed', status: response.status };
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? null : JSON.stringify(body),
  });
  if (!response.ok) {
    const problem = await problemOf(response);
    if (response.status === 401 && !path.startsWith('/ui/session')) onUnauthorized(problem.detail ?? 'Your session has ended.');
    throw new ApiError(problem);
  }
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** Builds a query string from the set values only. */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** "/decision_rule/posterior_threshold" as "posterior threshold": the field a person typed in. */
function fieldWords(pointer: string): string {
  const named = pointer
    .split('/')
    .filter((part) => part && !/^\d+$/.test(part))
    .pop();
  return (named ?? '').replace(/_/g, ' ');
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    const fields = error.problem.errors?.map((e) => `${fieldWords(e.pointer ?? e.parameter ?? '')} ${plainMessage(e.message, e.pointer)}`.trim());
    const detail = error.problem.detail ?? error.problem.title;
    if (fields && fields.length > 1) return `${error.problem.title}: ${fields.join('; ')}`;
    // The server's detail quotes the validator ("/url: must match pattern …"): say it in words.
    return fields && fields.length === 1 && /must (NOT|match|be [<>])/.test(detail) ? `${error.problem.title}: ${fields[0]}` : detail;
  }
  return error instanceof Error ? error.message : String(error);
}
