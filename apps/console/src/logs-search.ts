/**
 * The Logs page's search parameters: the router parses them (`validateSearch`) before the page, which
 * is loaded on demand, is there.
 */

/** The filters, as the URL's search parameters hold them (so a filtered view can be linked and reloaded). */
export interface LogsSearch {
  key_id?: string;
  model?: string;
  route?: string;
  status?: string;
  since?: number;
  until?: number;
  request_id?: string;
  cursor?: string;
}

/** A non-empty trimmed string, or nothing. */
export const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);
const seconds = (value: unknown): number | undefined => {
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isInteger(number) && number >= 0 ? number : undefined;
};

export function parseLogsSearch(search: Record<string, unknown>): LogsSearch {
  return {
    key_id: text(search.key_id),
    model: text(search.model),
    route: text(search.route),
    status: text(search.status),
    since: seconds(search.since),
    until: seconds(search.until),
    request_id: text(search.request_id),
    cursor: text(search.cursor),
  };
}
