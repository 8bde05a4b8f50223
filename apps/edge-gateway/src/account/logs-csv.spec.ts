import type { LogEntry } from '@gateway/contracts';
import { LOG_CSV_COLUMNS, logsCsvHeader, logsCsvRow } from './logs-csv';

const entry = (fields: Partial<LogEntry> = {}): LogEntry =>
  ({
    request_id: 'req_1',
    key: 'ek-...abcd',
    key_id: 'key_1',
    model: 'sim-chat',
    route: 'chat.completions',
    credits: 0.25,
    timestamp: 1_800_000_000,
    status: 'success',
    ip: '127.0.0.1',
    input_tokens: 10,
    output_tokens: 20,
    ...fields,
  }) as LogEntry;

const cells = (row: string) => row.replace(/\r\n$/, '').split(',');

describe('logs CSV', () => {
  it('names the columns once, in the order of the rows', () => {
    expect(logsCsvHeader()).toBe(`${LOG_CSV_COLUMNS.join(',')}\r\n`);
    expect(cells(logsCsvRow(entry()))).toHaveLength(LOG_CSV_COLUMNS.length);
  });

  it.each([
    [1e-7, '0.0000001'],
    [0.000000000001, '0.000000000001'],
    [1.234e-7, '0.0000001234'],
    [0, '0'],
    [12345.123456, '12345.123456'],
    [2.5, '2.5'],
  ])('writes credits %p as %s, never in exponent notation', (credits, text) => {
    expect(cells(logsCsvRow(entry({ credits })))[LOG_CSV_COLUMNS.indexOf('credits')]).toBe(text);
  });

  it('quotes commas and quotes, and neutralises a leading formula character', () => {
    const row = logsCsvRow(entry({ model: '=HYPERLINK("x"),1' }));
    expect(row).toContain(`"'=HYPERLINK(""x""),1"`);
  });
});
