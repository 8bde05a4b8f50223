/**
 * What third-party clients (Vercel AI SDK, LangChain) sent and got, seen from below: they hide the
 * HTTP response, so a `fetch` handed to them records each exchange's status and `x-request-id`,
 * and the ledger (`/v1/user/logs?request_id=`) is read for the same requests.
 */
import { ledgerEntry as ledgerEntryOf } from './api';

export interface RecordedExchange {
  method: string;
  url: string;
  /** The JSON body the client sent, when it sent one. */
  body: any;
  status: number;
  requestId: string | null;
}

export interface RecordingFetch {
  fetch: typeof globalThis.fetch;
  exchanges: RecordedExchange[];
  /** The gateway's request ids of the exchanges so far, in order. */
  requestIds(): string[];
}

/** A `fetch` that behaves as the global one and remembers every exchange. */
export function recordingFetch(): RecordingFetch {
  const exchanges: RecordedExchange[] = [];
  const recording: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const text = init?.body !== undefined && typeof init.body === 'string' ? init.body : undefined;
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const response = await globalThis.fetch(input, init);
    exchanges.push({ method: request.method, url: request.url, body, status: response.status, requestId: response.headers.get('x-request-id') });
    return response;
  };
  return {
    fetch: recording,
    exchanges,
    requestIds: () => exchanges.map((exchange) => exchange.requestId).filter((id): id is string => id !== null),
  };
}

export interface LedgerEntry {
  request_id: string;
  model: string;
  route: string;
  status: string;
  credits: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** The ledger's entry for a request, once metering (asynchronous) has written it. */
export const ledgerEntry = (key: string, requestId: string): Promise<LedgerEntry> => ledgerEntryOf(key, requestId);

/** The ledger's entries for requests, in the same order. */
export async function ledgerEntries(key: string, requestIds: string[]): Promise<LedgerEntry[]> {
  return Promise.all(requestIds.map((id) => ledgerEntry(key, id)));
}

/** Input and output tokens summed over entries, to compare with a client's total usage. */
export function ledgerTotals(entries: LedgerEntry[]): { input: number; output: number } {
  return entries.reduce((sum, entry) => ({ input: sum.input + entry.input_tokens, output: sum.output + entry.output_tokens }), { input: 0, output: 0 });
}
