/**
 * Every call the console makes: same origin, the session cookie, and the CSRF token (kept in memory)
 * as `x-csrf-token`. A 401 from any call means the session ended; the app goes back to sign-in.
 */
import { Session, sessionStore } from './session';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

type SessionEndedHandler = () => void;
let onSessionEnded: SessionEndedHandler = () => undefined;

/** Called by the app once: what to do when the session ends (clear caches, show sign-in). */
export function whenSessionEnds(handler: SessionEndedHandler): void {
  onSessionEnded = handler;
}

export function endSession(): void {
  sessionStore.set(null);
  onSessionEnded();
}

/** The words of any of the gateway's error shapes: `{detail}`, `{error: {message}}`, Anthropic's. */
function messageOf(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const record = body as Record<string, any>;
    if (typeof record.detail === 'string') return record.detail;
    if (typeof record.error?.message === 'string') return record.error.message;
    if (typeof record.message === 'string') return record.message;
  }
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 300);
  return `The gateway answered ${status}`;
}

export interface RawOptions {
  method?: string;
  body?: unknown;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** The response itself (for streams, headers, CSV); throws ApiError on a non-2xx answer. */
export async function apiRaw(path: string, options: RawOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...(options.headers ?? {}) };
  const session = sessionStore.get();
  if (session) headers['x-csrf-token'] = session.csrf_token;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: 'same-origin',
    cache: 'no-store',
    signal: options.signal,
  });
  if (!response.ok) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    if (response.status === 401 && session && !path.startsWith('/console/api/session')) endSession();
    throw new ApiError(response.status, messageOf(body, response.status), body);
  }
  return response;
}

export async function api<T>(path: string, options: RawOptions = {}): Promise<T> {
  const response = await apiRaw(path, options);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** `?a=1&b=2` of the defined, non-empty values. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

// --- Sessions -----------------------------------------------------------------------------------

export async function readSession(): Promise<Session | null> {
  const response = await fetch('/console/api/session', { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'application/json' } });
  if (response.status !== 200) return null;
  return (await response.json()) as Session;
}

export async function signIn(key: string): Promise<Session> {
  const response = await fetch('/console/api/session', {
    method: 'POST',
    credentials: 'same-origin',
    cache: 'no-store',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ key }),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  if (response.status === 404) throw new ApiError(404, 'This gateway does not offer console sessions (POST /console/api/session is missing).', body);
  if (!response.ok) throw new ApiError(response.status, messageOf(body, response.status), body);
  return body as Session;
}

export async function signOut(): Promise<void> {
  const session = sessionStore.get();
  await fetch('/console/api/session', {
    method: 'DELETE',
    credentials: 'same-origin',
    headers: session ? { 'x-csrf-token': session.csrf_token } : {},
  }).catch(() => undefined);
  endSession();
}

// --- Shapes of the answers used here ------------------------------------------------------------

export interface Budget {
  period: string;
  timezone: string;
  unit: 'credits' | 'tokens';
  amount: number;
  used: number;
  remaining: number;
  resets_at: number | null;
}

export interface KeyView {
  type: string;
  name: string | null;
  masked_key: string;
  plan: string;
  is_active: boolean;
  expires_at: number;
  model_whitelist: string[];
  ip_whitelist: string[];
  budgets: Budget[];
}

export interface UsageSummary {
  subscription: string;
  credits: number;
  usage: { input_tokens: number; output_tokens: number };
  history: { date: string; requests: number }[];
  endpoints: Record<string, number>;
}

export interface ProxyKeyRecord {
  id?: string;
  name: string;
  key: string;
  expires_at: number;
  allocated_ammount: number;
  used_ammount: number;
  spend_window: 'daily' | 'weekly' | 'monthly' | null;
  is_active: boolean;
  model_whitelist: string[];
  ip_whitelist: string[];
  created_at: number;
  last_used: number | null;
  budgets: Budget[];
}

export interface LogEntry {
  request_id: string;
  key: string;
  key_id?: string;
  model: string;
  route: string;
  credits: number;
  timestamp: number;
  status: string;
  ip: string;
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  refused_by?: { period: string; timezone: string };
}

export interface ModelEntry {
  id: string;
  name?: string;
  description?: string;
  owned_by?: string;
  tokens?: number;
  pricing?: { input: number; output: number; cache_read?: number; cache_write?: number; per_item?: number; per_second?: number; characters?: number };
  endpoints: string[];
  tags: string[];
  routes?: unknown[];
  metadata?: Record<string, unknown>;
}

export interface UsageSeries {
  object: 'usage.series';
  timezone: string;
  bucket: 'hour' | 'day';
  group_by: 'model' | 'key' | 'route' | 'none';
  from: number;
  to: number;
  groups: { group: string; label: string }[];
  points: { start: number; date: string; group: string; requests: number; input_tokens: number; output_tokens: number; credits: string }[];
  totals: { requests: number; input_tokens: number; output_tokens: number; credits: string };
}
