/**
 * The usage console's API: `/v1/user/usage` (series in a reporting time zone, from the rollups the
 * ledger writes), the `key_id` filter of `/v1/user/logs`, and `/v1/user/logs/export` (CSV), checked
 * against the request logs of real requests through the whole suite.
 */
import { DateTime } from 'luxon';
import { api, ApiResponse, createAccount, createProxyKey, ledgerEntry, TestAccount } from '../support/api';

const ZONE = 'Asia/Kolkata';

const chat = (key: string, content: string) => api('POST', '/v1/chat/completions', { key, body: { model: 'sim-chat', messages: [{ role: 'user', content }] } });

const requestIdOf = (response: ApiResponse): string => {
  expect(response.status).toBe(200);
  const id = response.headers.get('x-request-id');
  if (!id) throw new Error('no x-request-id');
  return id;
};

/** Credits as an exact count of 10^-12 (the ledger keeps 12 decimals): a log entry's number, a series' decimal string. */
function picoCredits(value: number | string): bigint {
  const text = typeof value === 'number' ? value.toFixed(12) : value;
  const match = /^(-?)(\d+)(?:\.(\d{1,12}))?$/.exec(text);
  if (!match) throw new Error(`not a decimal with at most 12 places: ${text}`);
  const units = BigInt(match[2]) * 10n ** 12n + BigInt((match[3] ?? '').padEnd(12, '0'));
  return match[1] ? -units : units;
}

interface Sums {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  credits: bigint;
}

const sumEntries = (entries: any[]): Sums => ({
  requests: entries.length,
  input_tokens: entries.reduce((sum, entry) => sum + (entry.input_tokens ?? 0), 0),
  output_tokens: entries.reduce((sum, entry) => sum + (entry.output_tokens ?? 0), 0),
  credits: entries.reduce((sum, entry) => sum + picoCredits(entry.credits), 0n),
});

const sumsOf = (totals: { requests: number; input_tokens: number; output_tokens: number; credits: string }): Sums => ({
  requests: totals.requests,
  input_tokens: totals.input_tokens,
  output_tokens: totals.output_tokens,
  credits: picoCredits(totals.credits),
});

/** Every log entry for the query, following `x-next-cursor`. */
async function allLogs(key: string, query: string): Promise<any[]> {
  const entries: any[] = [];
  let cursor = '';
  for (;;) {
    const response = await api('GET', `/v1/user/logs?limit=500&${query}${cursor ? `&cursor=${cursor}` : ''}`, { key });
    expect(response.status).toBe(200);
    entries.push(...response.body);
    cursor = response.headers.get('x-next-cursor') ?? '';
    if (!cursor) return entries;
  }
}

/** A minimal RFC 4180 reader: rows of cells (quoted cells may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += char;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** A log entry as its CSV row shows it: every field as text, a missing one empty, `refused_by` split in two. */
const asCsvRecord = (entry: any): Record<string, string> => {
  const text = (value: unknown) => (value === undefined ? '' : String(value));
  return {
    request_id: entry.request_id,
    key: entry.key,
    key_id: entry.key_id,
    model: entry.model,
    route: entry.route,
    credits: text(entry.credits),
    timestamp: text(entry.timestamp),
    status: entry.status,
    ip: entry.ip,
    input_tokens: text(entry.input_tokens),
    output_tokens: text(entry.output_tokens),
    cache_read_input_tokens: text(entry.cache_read_input_tokens),
    cache_creation_input_tokens: text(entry.cache_creation_input_tokens),
    refused_by_period: text(entry.refused_by?.period),
    refused_by_timezone: text(entry.refused_by?.timezone),
  };
};

describe('usage console API', () => {
  let owner: TestAccount;
  let proxy: { id: string; key: string; name: string };
  let masterKeyId: string;
  /** Today in Kolkata: its first second and the next day's, Unix seconds. */
  let day: { from: number; to: number; date: string };

  beforeAll(async () => {
    owner = createAccount('pro', '50');
    proxy = await createProxyKey(owner.masterKey, { name: 'console', allocated_ammount: 5 });
    expect(proxy.id).toEqual(expect.any(String));

    const masterIds = [];
    for (const content of ['one', 'a longer second prompt for more tokens', 'three']) masterIds.push(requestIdOf(await chat(owner.masterKey, content)));
    const proxyIds = [];
    for (const content of ['from the proxy key', 'and again']) proxyIds.push(requestIdOf(await chat(proxy.key, content)));
    // Metering is asynchronous: wait until the ledger holds every request (the rollups are written in the same statement).
    for (const id of masterIds) await ledgerEntry(owner.masterKey, id);
    for (const id of proxyIds) await ledgerEntry(owner.masterKey, id);
    masterKeyId = (await ledgerEntry(owner.masterKey, masterIds[0])).key_id;

    const start = DateTime.now().setZone(ZONE).startOf('day');
    day = { from: start.toSeconds(), to: start.plus({ days: 1 }).toSeconds(), date: start.toISODate() as string };
  }, 60_000);

  const usage = (key: string, query: string) => api('GET', `/v1/user/usage?${query}`, { key });
  const today = () => `from=${day.from}&to=${day.to}&timezone=${encodeURIComponent(ZONE)}&bucket=day`;

  it("sums today's Kolkata day exactly as the request logs of that day add up", async () => {
    const response = await usage(owner.masterKey, `${today()}&group_by=model`);
    expect(response.status).toBe(200);
    const series = response.body;
    const entries = await allLogs(owner.masterKey, `since=${day.from}&until=${day.to}`);
    expect(entries).toHaveLength(5);

    expect(series).toMatchObject({ object: 'usage.series', timezone: ZONE, bucket: 'day', group_by: 'model', from: day.from, to: day.to });
    expect(sumsOf(series.totals)).toEqual(sumEntries(entries));
    expect(series.groups).toEqual([{ group: 'sim-chat', label: 'sim-chat' }]);
    // One local day: it starts at Kolkata's midnight, named by its local date.
    expect(series.points).toEqual([{ start: day.from, date: day.date, group: 'sim-chat', ...series.totals }]);
    expect(series.totals.credits).toMatch(/^\d+(\.\d+)?$/);
  });

  it('splits the day by key, names each key, and narrows to one key for the master key', async () => {
    const entries = await allLogs(owner.masterKey, `since=${day.from}&until=${day.to}`);
    const response = await usage(owner.masterKey, `${today()}&group_by=key`);
    expect(response.status).toBe(200);
    const { groups, points, totals } = response.body;
    expect(groups.map((group: { group: string }) => group.group).sort()).toEqual([masterKeyId, proxy.id].sort());
    const proxyGroup = groups.find((group: { group: string }) => group.group === proxy.id);
    expect(proxyGroup.label).toContain('console');
    expect(proxyGroup.label).toContain(proxy.key.slice(-4));
    for (const keyId of [masterKeyId, proxy.id]) {
      const point = points.find((p: { group: string }) => p.group === keyId);
      expect(sumsOf(point)).toEqual(sumEntries(entries.filter((entry) => entry.key_id === keyId)));
    }
    expect(sumsOf(totals)).toEqual(sumEntries(entries));

    const narrowed = await usage(owner.masterKey, `${today()}&group_by=none&key_id=${proxy.id}`);
    expect(narrowed.status).toBe(200);
    const proxyEntries = entries.filter((entry) => entry.key_id === proxy.id);
    expect(proxyEntries).toHaveLength(2);
    expect(sumsOf(narrowed.body.totals)).toEqual(sumEntries(proxyEntries));
    expect(narrowed.body.groups).toEqual([{ group: 'all', label: 'all' }]);

    // The log listing filters by the same key id.
    expect(await allLogs(owner.masterKey, `since=${day.from}&until=${day.to}&key_id=${proxy.id}`)).toEqual(proxyEntries);
  });

  it('shows a proxy key only its own usage and logs, whatever key_id it sends', async () => {
    const entries = await allLogs(owner.masterKey, `since=${day.from}&until=${day.to}&key_id=${proxy.id}`);
    const own = await usage(proxy.key, `${today()}&group_by=key`);
    expect(own.status).toBe(200);
    expect(own.body.groups.map((group: { group: string }) => group.group)).toEqual([proxy.id]);
    expect(sumsOf(own.body.totals)).toEqual(sumEntries(entries));
    expect(await allLogs(proxy.key, `since=${day.from}&until=${day.to}`)).toEqual(entries);

    const other = await usage(proxy.key, `${today()}&key_id=${masterKeyId}`);
    expect(other.status).toBe(200);
    expect(other.body.points).toEqual([]);
    expect(other.body.totals).toEqual({ requests: 0, input_tokens: 0, output_tokens: 0, credits: '0' });
    expect(await allLogs(proxy.key, `key_id=${masterKeyId}`)).toEqual([]);
  });

  it('answers hour buckets in local hours of the zone', async () => {
    const response = await usage(owner.masterKey, `${today().replace('bucket=day', 'bucket=hour')}&group_by=none`);
    expect(response.status).toBe(200);
    for (const point of response.body.points) {
      const local = DateTime.fromSeconds(point.start, { zone: ZONE });
      expect(local.minute).toBe(0);
      expect(point.date).toBe(local.toFormat("yyyy-MM-dd'T'HH:00"));
    }
    expect(response.body.totals.requests).toBe(5);
  });

  it.each([
    ['timezone=Mars%2FOlympus_Mons', 'timezone'],
    // An offset is no IANA name (Node.js 22+ would take it; PostgreSQL would read +05:30 as west of UTC).
    ['timezone=%2B05%3A30', 'timezone'],
    ['bucket=week', 'bucket'],
    ['group_by=user', 'group_by'],
    ['from=200&to=100', 'to'],
    ['from=0&to=86400000', 'to'],
    ['from=abc', 'from'],
  ])('refuses ?%s with a 400 naming %s', async (query, field) => {
    const response = await usage(owner.masterKey, query);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ param: field });
    expect(response.body.error.message).toContain(field);
  });

  it('exports the same entries as the JSON logs for the same filter, as CSV', async () => {
    for (const [key, query] of [
      [owner.masterKey, `since=${day.from}&until=${day.to}`],
      [owner.masterKey, `since=${day.from}&until=${day.to}&key_id=${proxy.id}`],
      [proxy.key, `model=sim-chat`],
    ]) {
      const entries = await allLogs(key, query);
      const response = await api('GET', `/v1/user/logs/export?${query}`, { key });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(response.headers.get('content-disposition')).toBe('attachment; filename="logs.csv"');
      expect(response.headers.get('x-export-truncated')).toBeNull();
      const [header, ...rows] = parseCsv(response.text);
      const records = rows.map((row) => Object.fromEntries(header.map((column, i) => [column, row[i]])));
      // Credits in plain decimal notation (never `1e-7`), the same number as the JSON entry's.
      expect(records.map((record) => record.credits)).toEqual(entries.map(() => expect.stringMatching(/^\d+(\.\d{1,12})?$/)));
      expect(records.map((record) => Number(record.credits))).toEqual(entries.map((entry: any) => entry.credits));
      expect(records.map((record) => ({ ...record, credits: '' }))).toEqual(entries.map((entry: any) => ({ ...asCsvRecord(entry), credits: '' })));
    }
  });
});
