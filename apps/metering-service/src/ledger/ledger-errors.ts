import { isDependencyUnavailable } from '@gateway/platform';

/**
 * What a failed ledger write says about the event:
 * - `data`: PostgreSQL refused the event's data (SQLSTATE class 22 data exception, 23 integrity
 *   constraint): the same event fails on every delivery, so it is set aside at once;
 * - `unavailable`: the database, not the event (unreachable, connection lost, shutting down, out of
 *   resources, a lock or serialization conflict, the schema or credentials wrong): retried for as
 *   long as it takes, and never counted against the event;
 * - `other`: anything else (a bug, an unknown error): retried a bounded number of times.
 */
export type LedgerFailure = 'data' | 'unavailable' | 'other';

/** SQLSTATE classes that are the database's condition, whatever the event. */
const UNAVAILABLE_CLASSES = new Set(['08', '25', '28', '3D', '40', '42', '53', '55', '57', '58', 'F0', 'XX']);
/** The driver adapter's kinds for the same (Prisma 7, @prisma/adapter-pg), when there is no SQLSTATE. */
const UNAVAILABLE_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'DatabaseDoesNotExist',
  'DatabaseAccessDenied',
  'AuthenticationFailed',
  'TlsConnectionError',
  'TransactionWriteConflict',
  'TransactionAlreadyClosed',
]);

interface AdapterCause {
  originalCode?: unknown;
  code?: unknown;
  kind?: unknown;
}

/** The adapter's description of the failure: Prisma puts it in `meta.driverAdapterError.cause`. */
function adapterCause(error: unknown): AdapterCause | undefined {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: AdapterCause } } } | null)?.meta;
  return meta?.driverAdapterError?.cause;
}

/** The PostgreSQL SQLSTATE of a failure, wherever the driver put it. */
export function sqlState(error: unknown, depth = 0): string | undefined {
  if (depth > 5 || error === null || typeof error !== 'object') return undefined;
  const cause = adapterCause(error);
  for (const code of [cause?.originalCode, cause?.code]) if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  // Prisma's own codes (P2010 ...) are not SQLSTATEs.
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !(typeof name === 'string' && name.startsWith('Prisma'))) return code;
  return sqlState((error as { cause?: unknown }).cause, depth + 1);
}

export function classifyLedgerError(error: unknown): LedgerFailure {
  const state = sqlState(error);
  if (state) {
    const sqlClass = state.slice(0, 2);
    if (sqlClass === '22' || sqlClass === '23') return 'data';
    if (UNAVAILABLE_CLASSES.has(sqlClass)) return 'unavailable';
  }
  const kind = adapterCause(error)?.kind;
  if (typeof kind === 'string' && UNAVAILABLE_KINDS.has(kind)) return 'unavailable';
  if (isDependencyUnavailable(error)) return 'unavailable';
  return 'other';
}
