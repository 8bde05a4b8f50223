import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { DateTime } from 'luxon';
import { FormEvent, useState } from 'react';
import { api, apiRaw, LogEntry, ProxyKeyRecord, query } from '../api';
import { ErrorNote, Modal } from '../components';
import { formatCount, formatCredits, formatTime, maskKey } from '../format';
import { LogsSearch, text } from '../logs-search';
import { isMaster, useSession } from '../session';
import { useTimeZone } from '../settings';

const PAGE_SIZE = 50;
const REFRESH_MS = 5000;
const STATUSES = ['success', 'cancelled', 'error', 'refused'];
const ROUTES = [
  'chat.completions',
  'responses',
  'messages',
  'embeddings',
  'moderations',
  'images.generations',
  'images.edits',
  'audio.speech',
  'audio.transcriptions',
  'audio.translations',
  'videos.generations',
  'decisions',
];

const toLocalInput = (value: number | undefined, zone: string): string =>
  value === undefined ? '' : DateTime.fromSeconds(value, { zone }).toFormat("yyyy-LL-dd'T'HH:mm");
const fromLocalInput = (value: string, zone: string): number | undefined => (value ? Math.floor(DateTime.fromISO(value, { zone }).toSeconds()) : undefined);

/** The filters of the API (the cursor apart). */
const filtersOf = (search: LogsSearch) => ({
  key_id: search.key_id,
  model: search.model,
  route: search.route,
  status: search.status,
  since: search.since,
  until: search.until,
  request_id: search.request_id,
});

function Detail({ entry, zone }: { entry: LogEntry; zone: string }) {
  const rows: [string, string][] = [
    ['Request id', entry.request_id],
    ['Time', formatTime(entry.timestamp, zone)],
    ['Key', entry.key],
    ['Model', entry.model],
    ['Route', entry.route],
    ['Status', entry.status + (entry.refused_by ? ` (by ${entry.refused_by.period}, ${entry.refused_by.timezone})` : '')],
    ['Input tokens', formatCount(entry.input_tokens)],
    ['Output tokens', formatCount(entry.output_tokens)],
    ['Cache reads', formatCount(entry.cache_read_input_tokens)],
    ['Cache writes', formatCount(entry.cache_creation_input_tokens)],
    ['Credits', formatCredits(entry.credits)],
    ['IP', entry.ip],
  ];
  return (
    <dl className="detail" data-testid="log-detail">
      {rows.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function LogsPage() {
  const session = useSession();
  const zone = useTimeZone();
  const search = useSearch({ from: '/logs' });
  const navigate = useNavigate({ from: '/logs' });
  const [previous, setPrevious] = useState<(string | undefined)[]>([]);
  const [open, setOpen] = useState<LogEntry | null>(null);
  const [exportError, setExportError] = useState<unknown>(null);
  const master = isMaster(session);

  const keys = useQuery({ queryKey: ['proxy-keys'], queryFn: () => api<ProxyKeyRecord[]>('/v1/auth/proxy'), enabled: master });
  const logs = useQuery({
    queryKey: ['logs', search],
    queryFn: async () => {
      const response = await apiRaw(`/v1/user/logs${query({ ...filtersOf(search), limit: PAGE_SIZE, cursor: search.cursor })}`);
      return { entries: (await response.json()) as LogEntry[], next: response.headers.get('x-next-cursor') };
    },
    placeholderData: keepPreviousData,
    // Newest entries arrive on the first page: refreshed while the page is visible, not in the background.
    refetchInterval: () => (!search.cursor && document.visibilityState === 'visible' ? REFRESH_MS : false),
    refetchIntervalInBackground: false,
  });

  function applyFilters(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const value = (name: string) => text(form.get(name));
    setPrevious([]);
    void navigate({
      search: {
        key_id: value('key_id'),
        model: value('model'),
        route: value('route'),
        status: value('status'),
        since: fromLocalInput(String(form.get('since') ?? ''), zone),
        until: fromLocalInput(String(form.get('until') ?? ''), zone),
        request_id: value('request_id'),
      },
    });
  }

  async function exportCsv() {
    setExportError(null);
    try {
      const response = await apiRaw(`/v1/user/logs/export${query(filtersOf(search))}`, { headers: { accept: 'text/csv' } });
      const blob = await response.blob();
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = `logs-${DateTime.now().setZone(zone).toFormat('yyyyLLdd-HHmmss')}.csv`;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (error) {
      setExportError(error);
    }
  }

  const keyName = (entry: LogEntry): string => {
    const record = keys.data?.find((candidate) => candidate.id !== undefined && candidate.id === entry.key_id);
    return record ? `${record.name} (${entry.key})` : entry.key;
  };

  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Logs</h1>
      <form className="filters" onSubmit={applyFilters} aria-label="Log filters" key={JSON.stringify(filtersOf(search))}>
        {master ? (
          <div className="field">
            <label htmlFor="logs-key-id">Key</label>
            <select id="logs-key-id" name="key_id" defaultValue={search.key_id ?? ''}>
              <option value="">All keys</option>
              {keys.data
                ?.filter((record) => record.id)
                .map((record) => (
                  <option key={record.id} value={record.id}>
                    {record.name} ({maskKey(record.key)})
                  </option>
                ))}
            </select>
          </div>
        ) : null}
        <label>
          Model
          <input name="model" defaultValue={search.model ?? ''} />
        </label>
        <div className="field">
          <label htmlFor="logs-route">Route</label>
          <select id="logs-route" name="route" defaultValue={search.route ?? ''}>
            <option value="">Any route</option>
            {ROUTES.map((route) => (
              <option key={route} value={route}>
                {route}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="logs-status">Status</label>
          <select id="logs-status" name="status" defaultValue={search.status ?? ''}>
            <option value="">Any status</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <label>
          From ({zone})
          <input name="since" type="datetime-local" defaultValue={toLocalInput(search.since, zone)} />
        </label>
        <label>
          Until ({zone})
          <input name="until" type="datetime-local" defaultValue={toLocalInput(search.until, zone)} />
        </label>
        <label>
          Request id
          <input name="request_id" defaultValue={search.request_id ?? ''} placeholder="req_…" />
        </label>
        <div className="filter-actions">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setPrevious([]);
              void navigate({ search: {} });
            }}
          >
            Clear
          </button>
          <button type="button" className="secondary" onClick={() => void exportCsv()}>
            Export CSV
          </button>
        </div>
      </form>
      <ErrorNote error={logs.error || exportError} />
      <p className="hint" aria-live="polite">
        {logs.isFetching ? 'Loading…' : `${logs.data?.entries.length ?? 0} entries on this page${!search.cursor ? ', refreshed every 5 s while visible' : ''}.`}
      </p>
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Request log table">
        <table className="logs-table">
          <caption className="visually-hidden">Request log, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Key</th>
              <th scope="col">Model</th>
              <th scope="col">Route</th>
              <th scope="col">Status</th>
              <th scope="col">Tokens in/out</th>
              <th scope="col">Credits</th>
              <th scope="col">
                <span className="visually-hidden">Details</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {logs.data?.entries.map((entry) => (
              <tr key={entry.request_id} data-request-id={entry.request_id}>
                <td data-label="Time">{formatTime(entry.timestamp, zone)}</td>
                <td data-label="Key">{keyName(entry)}</td>
                <td data-label="Model">{entry.model}</td>
                <td data-label="Route">{entry.route}</td>
                <td data-label="Status">
                  <span className={`badge ${entry.status}`}>{entry.status}</span>
                </td>
                <td data-label="Tokens">
                  {formatCount(entry.input_tokens)} / {formatCount(entry.output_tokens)}
                </td>
                <td data-label="Credits">{formatCredits(entry.credits)}</td>
                <td>
                  <button type="button" className="secondary" onClick={() => setOpen(entry)} aria-label={`Details of ${entry.request_id}`}>
                    Details
                  </button>
                </td>
              </tr>
            ))}
            {logs.data && logs.data.entries.length === 0 ? (
              <tr>
                <td colSpan={8}>No requests match these filters.</td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      <nav className="pager" aria-label="Pages">
        <button
          type="button"
          className="secondary"
          disabled={!search.cursor}
          onClick={() => {
            const back = previous.slice(0, -1);
            const cursor = previous.at(-1);
            setPrevious(back);
            void navigate({ search: { ...search, cursor } });
          }}
        >
          Newer
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!logs.data?.next}
          onClick={() => {
            setPrevious([...previous, search.cursor]);
            void navigate({ search: { ...search, cursor: logs.data?.next ?? undefined } });
          }}
        >
          Older
        </button>
      </nav>
      <Modal title="Request details" open={open !== null} onClose={() => setOpen(null)} variant="drawer">
        {open ? <Detail entry={open} zone={zone} /> : null}
      </Modal>
    </section>
  );
}
