/**
 * The console session: the edge holds it (an HttpOnly cookie); the page keeps only what
 * GET /console/api/session answers, in memory. The key itself is never stored by the page.
 */
import { useSyncExternalStore } from 'react';

export type KeyType = 'master' | 'proxy' | 'dev' | 'devpass';

export interface Session {
  key_type: KeyType;
  /** Masked, as the edge answers it. */
  key: string;
  csrf_token: string;
  expires_at: number;
  idle_expires_in: number;
}

type Listener = () => void;

let current: Session | null = null;
/** Whether GET /console/api/session has answered once (before that the app shows nothing). */
let checked = false;
const listeners = new Set<Listener>();

function emit(): void {
  for (const listener of listeners) listener();
}

export const sessionStore = {
  get: (): Session | null => current,
  checked: (): boolean => checked,
  set(session: Session | null): void {
    current = session;
    checked = true;
    emit();
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

export function useSession(): Session | null {
  return useSyncExternalStore(sessionStore.subscribe, sessionStore.get);
}

export const isMaster = (session: Session | null): boolean => session?.key_type === 'master';
