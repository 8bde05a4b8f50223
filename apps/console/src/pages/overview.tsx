import { useQuery } from '@tanstack/react-query';
import { DateTime } from 'luxon';
import { useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { api, Budget, KeyView, query, UsageSeries, UsageSummary } from '../api';
import { ErrorNote } from '../components';
import { formatCount, formatCredits, formatTime } from '../format';
import { useSession } from '../session';
import { useTimeZone } from '../settings';
import { fillUsageBuckets } from '../usage-buckets';

type Range = 'today' | 'yesterday' | '7d' | '30d';
type Metric = 'requests' | 'tokens' | 'credits';
type GroupBy = 'model' | 'key' | 'route' | 'none';

const RANGES: Record<Range, string> = { today: 'Today', yesterday: 'Yesterday', '7d': 'Last 7 days', '30d': 'Last 30 days' };
/** Distinguishable on white at 3:1 or more (graphical objects). */
const PALETTE = ['#1f5fbf', '#b3261e', '#1b7a3a', '#8a4b00', '#6a3fb5', '#00707a', '#a1306b', '#4d5b00', '#5c5c5c', '#0b4f8a'];

/** [from, to) in Unix seconds: whole days in the reporting zone. */
export function rangeBounds(range: Range, zone: string, now = DateTime.now()): { from: number; to: number } {
  const today = now.setZone(zone).startOf('day');
  const tomorrow = today.plus({ days: 1 });
  const [from, to] =
    range === 'today'
      ? [today, tomorrow]
      : range === 'yesterday'
        ? [today.minus({ days: 1 }), today]
        : range === '7d'
          ? [today.minus({ days: 6 }), tomorrow]
          : [today.minus({ days: 29 }), tomorrow];
  return { from: Math.floor(from.toSeconds()), to: Math.floor(to.toSeconds()) };
}

function BudgetRow({ budget, zone }: { budget: Budget; zone: string }) {
  const share = budget.amount > 0 ? Math.min(1, budget.used / budget.amount) : 1;
  const amount = budget.unit === 'credits' ? formatCredits : formatCount;
  return (
    <tr>
      <th scope="row">
        {budget.period}
        {budget.timezone !== 'UTC' ? ` (${budget.timezone})` : ''}
      </th>
      <td>{amount(budget.amount)}</td>
      <td>{amount(budget.used)}</td>
      <td>
        <span data-testid={`budget-remaining-${budget.period}`}>{amount(budget.remaining)}</span>{' '}
        <progress max={1} value={share} aria-label={`${budget.period} budget used`} />
      </td>
      <td>{budget.unit}</td>
      <td>{budget.resets_at ? formatTime(budget.resets_at, zone) : budget.period === 'lifetime' ? 'never' : '—'}</td>
    </tr>
  );
}

export function OverviewPage() {
  const session = useSession();
  const zone = useTimeZone();
  const [range, setRange] = useState<Range>('today');
  const [bucket, setBucket] = useState<'hour' | 'day'>('hour');
  const [groupBy, setGroupBy] = useState<GroupBy>('model');
  const [metric, setMetric] = useState<Metric>('requests');
  const bounds = useMemo(() => rangeBounds(range, zone), [range, zone]);

  const me = useQuery({ queryKey: ['me'], queryFn: () => api<UsageSummary>('/v1/user/me') });
  const key = useQuery({ queryKey: ['key'], queryFn: () => api<KeyView>('/v1/key') });
  const usage = useQuery({
    queryKey: ['usage', bounds, bucket, groupBy, zone],
    queryFn: () => api<UsageSeries>(`/v1/user/usage${query({ ...bounds, bucket, group_by: groupBy, timezone: zone })}`),
  });

  // Every local hour or day of the range, the ones without usage as zeros (the API answers only the others).
  const chart = useMemo(() => {
    const series = usage.data;
    if (!series) return { rows: [], groups: [] as { group: string; label: string }[] };
    const buckets = fillUsageBuckets(series);
    const labels = new Map(series.groups.map(({ group, label }) => [group, label]));
    const groups = (buckets[0]?.points ?? []).map(({ group }) => ({ group, label: labels.get(group) ?? group }));
    const rows = buckets.map((bucket) => {
      const row: Record<string, number | string> = {
        start: bucket.start,
        label: DateTime.fromSeconds(bucket.start, { zone: series.timezone }).toFormat(series.bucket === 'hour' ? 'LLL dd HH:mm' : 'LLL dd'),
      };
      for (const point of bucket.points) {
        row[point.group] = metric === 'requests' ? point.requests : metric === 'tokens' ? point.input_tokens + point.output_tokens : Number(point.credits);
      }
      return row;
    });
    return { rows, groups };
  }, [usage.data, metric]);

  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <div className="cards">
        <div className="card">
          <h2>Credits</h2>
          <p className="figure" data-testid="credits">
            {me.data ? formatCredits(me.data.credits) : '…'}
          </p>
        </div>
        <div className="card">
          <h2>Plan</h2>
          <p className="figure" data-testid="plan">
            {me.data?.subscription ?? '…'}
          </p>
        </div>
        <div className="card">
          <h2>Signed in as</h2>
          <p className="figure small">{key.data ? `${key.data.type}${key.data.name ? ` “${key.data.name}”` : ''}` : (session?.key_type ?? '…')}</p>
          <p className="hint">{key.data?.masked_key ?? session?.key}</p>
        </div>
      </div>
      <ErrorNote error={me.error || key.error} />

      <h2>Budgets of this key</h2>
      {key.data && key.data.budgets.length === 0 ? (
        <p>This key has no budget of its own: it spends the account&apos;s credits.</p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Budgets table">
          <table>
            <caption className="visually-hidden">Budgets of the signed-in key</caption>
            <thead>
              <tr>
                <th scope="col">Window</th>
                <th scope="col">Amount</th>
                <th scope="col">Used</th>
                <th scope="col">Remaining</th>
                <th scope="col">Unit</th>
                <th scope="col">Resets ({zone})</th>
              </tr>
            </thead>
            <tbody>
              {key.data?.budgets.map((budget) => (
                <BudgetRow key={`${budget.period}-${budget.timezone}`} budget={budget} zone={zone} />
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2>Usage</h2>
      <form className="filters" onSubmit={(event) => event.preventDefault()} aria-label="Usage chart options">
        <div className="field">
          <label htmlFor="overview-range">Range</label>
          <select id="overview-range" value={range} onChange={(event) => setRange(event.target.value as Range)} name="range">
            {Object.entries(RANGES).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="overview-bucket">Bucket</label>
          <select id="overview-bucket" value={bucket} onChange={(event) => setBucket(event.target.value as 'hour' | 'day')} name="bucket">
            <option value="hour">Hour</option>
            <option value="day">Day</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="overview-group-by">Stack by</label>
          <select id="overview-group-by" value={groupBy} onChange={(event) => setGroupBy(event.target.value as GroupBy)} name="group_by">
            <option value="model">Model</option>
            <option value="key">Key</option>
            <option value="route">Route</option>
            <option value="none">Nothing</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="overview-metric">Show</label>
          <select id="overview-metric" value={metric} onChange={(event) => setMetric(event.target.value as Metric)} name="metric">
            <option value="requests">Requests</option>
            <option value="tokens">Tokens</option>
            <option value="credits">Credits</option>
          </select>
        </div>
      </form>
      <p className="hint">
        Time zone {zone} (change it in Settings). {formatTime(bounds.from, zone)} to {formatTime(bounds.to, zone)}.
      </p>
      <ErrorNote error={usage.error} />
      {usage.data ? (
        <>
          <dl className="totals" aria-label="Totals for the range">
            <div>
              <dt>Requests</dt>
              <dd data-testid="total-requests">{usage.data.totals.requests}</dd>
            </div>
            <div>
              <dt>Input tokens</dt>
              <dd data-testid="total-input-tokens">{usage.data.totals.input_tokens}</dd>
            </div>
            <div>
              <dt>Output tokens</dt>
              <dd data-testid="total-output-tokens">{usage.data.totals.output_tokens}</dd>
            </div>
            <div>
              <dt>Credits</dt>
              <dd data-testid="total-credits">{usage.data.totals.credits}</dd>
            </div>
          </dl>
          <figure className="chart" aria-label={`${metric} per ${bucket}, stacked by ${groupBy}`}>
            <ResponsiveContainer width="100%" height={300}>
              <BarChart data={chart.rows} margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
                <CartesianGrid strokeDasharray="3 3" stroke="#c8ccd2" />
                <XAxis dataKey="label" tick={{ fill: '#30343a', fontSize: 12 }} />
                <YAxis tick={{ fill: '#30343a', fontSize: 12 }} allowDecimals={metric === 'credits'} />
                <Tooltip />
                <Legend />
                {chart.groups.map((group, index) => (
                  <Bar
                    key={group.group}
                    dataKey={group.group}
                    name={group.label}
                    stackId="usage"
                    fill={PALETTE[index % PALETTE.length]}
                    isAnimationActive={false}
                  />
                ))}
              </BarChart>
            </ResponsiveContainer>
            {usage.data.points.length === 0 ? <figcaption>No requests in this range.</figcaption> : null}
          </figure>
        </>
      ) : null}
    </section>
  );
}
