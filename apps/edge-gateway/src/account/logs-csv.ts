import type { LogEntry } from '@gateway/contracts';

/**
 * The CSV columns of `/v1/user/logs/export`: the fields of a `/v1/user/logs` entry, in its order;
 * `refused_by` is split into its period and time zone. A field an entry lacks is an empty cell.
 */
export const LOG_CSV_COLUMNS = [
  'request_id',
  'key',
  'key_id',
  'model',
  'route',
  'credits',
  'timestamp',
  'status',
  'ip',
  'input_tokens',
  'output_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
  'refused_by_period',
  'refused_by_timezone',
] as const;

/** One CSV cell (RFC 4180): quoted when it holds a comma, quote, or line break; a leading formula character is neutralised. */
function cell(value: string | number | undefined): string {
  if (value === undefined) return '';
  let text = String(value);
  // Spreadsheets run a cell starting with = + - @ as a formula: a model name or key must not.
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const logsCsvHeader = (): string => `${LOG_CSV_COLUMNS.join(',')}\r\n`;

/**
 * Credits in plain decimal notation at the ledger's scale (12 places): a JSON number such as 1e-7
 * would read as text `1e-7`, which a spreadsheet or a decimal parser may not take.
 */
const CREDITS = new Intl.NumberFormat('en-US', { useGrouping: false, maximumFractionDigits: 12 });

export function logsCsvRow(entry: LogEntry): string {
  const values: Record<(typeof LOG_CSV_COLUMNS)[number], string | number | undefined> = {
    request_id: entry.request_id,
    key: entry.key,
    key_id: entry.key_id,
    model: entry.model,
    route: entry.route,
    credits: CREDITS.format(entry.credits),
    timestamp: entry.timestamp,
    status: entry.status,
    ip: entry.ip,
    input_tokens: entry.input_tokens,
    output_tokens: entry.output_tokens,
    cache_read_input_tokens: entry.cache_read_input_tokens,
    cache_creation_input_tokens: entry.cache_creation_input_tokens,
    refused_by_period: entry.refused_by?.period,
    refused_by_timezone: entry.refused_by?.timezone,
  };
  return `${LOG_CSV_COLUMNS.map((column) => cell(values[column])).join(',')}\r\n`;
}
