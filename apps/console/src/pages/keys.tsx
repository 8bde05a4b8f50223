import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper, tableFeatures, useTable } from '@tanstack/react-table';
import { DateTime } from 'luxon';
import { FormEvent, useMemo, useState } from 'react';
import { api, Budget, ProxyKeyRecord, readSession } from '../api';
import { ErrorNote, Modal, SecretOnce } from '../components';
import { expiryText, formatCredits, formatTime, maskKey } from '../format';
import { sessionStore } from '../session';
import { useTimeZone } from '../settings';

const features = tableFeatures({});
const helper = createColumnHelper<typeof features, ProxyKeyRecord>();

function stateOf(record: ProxyKeyRecord): string {
  if (!record.is_active) return 'off';
  if (record.expires_at !== -1 && record.expires_at * 1000 < Date.now()) return 'expired';
  return 'on';
}

interface BudgetRowInput {
  id: number;
  amount: string;
  period: string;
  timezone: string;
}

interface KeyFormValues {
  name: string;
  allocated: string;
  spendWindow: '' | 'daily' | 'weekly' | 'monthly';
  expires: string;
  models: string;
  ips: string;
  budgets: BudgetRowInput[];
}

let rowIds = 0;
const emptyForm = (): KeyFormValues => ({ name: '', allocated: '10', spendWindow: '', expires: '', models: '', ips: '', budgets: [] });

function formOf(record: ProxyKeyRecord, zone: string): KeyFormValues {
  return {
    name: record.name,
    allocated: String(record.allocated_ammount),
    spendWindow: record.spend_window ?? '',
    expires: record.expires_at === -1 ? '' : DateTime.fromSeconds(record.expires_at, { zone }).toFormat("yyyy-LL-dd'T'HH:mm"),
    models: record.model_whitelist.join('\n'),
    ips: record.ip_whitelist.join('\n'),
    // The allocation comes first in `budgets`; the windows follow.
    budgets: record.budgets
      .slice(1)
      .map((budget: Budget) => ({ id: ++rowIds, amount: String(budget.amount), period: budget.period, timezone: budget.timezone })),
  };
}

const lines = (text: string): string[] =>
  text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter(Boolean);

function bodyOf(values: KeyFormValues, zone: string): Record<string, unknown> {
  const expires = values.expires ? Math.floor(DateTime.fromISO(values.expires, { zone }).toSeconds()) : -1;
  return {
    name: values.name.trim(),
    allocated_ammount: Number(values.allocated),
    spend_window: values.spendWindow || null,
    expires_at: expires,
    model_whitelist: lines(values.models),
    ip_whitelist: lines(values.ips),
    budgets: values.budgets.map((row) => ({ amount: Number(row.amount), period: row.period.trim(), timezone: row.timezone.trim() || 'UTC' })),
  };
}

function KeyForm({
  initial,
  submitLabel,
  onSubmit,
  busy,
}: {
  initial: KeyFormValues;
  submitLabel: string;
  onSubmit: (values: KeyFormValues) => void;
  busy: boolean;
}) {
  const zone = useTimeZone();
  const [values, setValues] = useState(initial);
  const set = <K extends keyof KeyFormValues>(name: K, value: KeyFormValues[K]) => setValues((old) => ({ ...old, [name]: value }));
  const setRow = (id: number, change: Partial<BudgetRowInput>) =>
    set(
      'budgets',
      values.budgets.map((row) => (row.id === id ? { ...row, ...change } : row)),
    );
  return (
    <form
      className="key-form"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        onSubmit(values);
      }}
    >
      <label>
        Name
        <input name="name" required maxLength={25} value={values.name} onChange={(event) => set('name', event.target.value)} />
      </label>
      <div className="row">
        <label>
          Allocation (credits)
          <input
            name="allocated_ammount"
            type="number"
            min={0}
            step="any"
            required
            value={values.allocated}
            onChange={(event) => set('allocated', event.target.value)}
          />
        </label>
        <div className="field">
          <label htmlFor="keys-spend-window">Allocation window</label>
          <select
            id="keys-spend-window"
            name="spend_window"
            value={values.spendWindow}
            onChange={(event) => set('spendWindow', event.target.value as KeyFormValues['spendWindow'])}
          >
            <option value="">Lifetime</option>
            <option value="daily">Daily (UTC)</option>
            <option value="weekly">Weekly (UTC)</option>
            <option value="monthly">Monthly (UTC)</option>
          </select>
        </div>
      </div>
      <fieldset>
        <legend>Budget windows</legend>
        {values.budgets.length === 0 ? <p className="hint">None: only the allocation limits this key.</p> : null}
        {values.budgets.map((row, index) => (
          <div className="row budget-row" key={row.id}>
            <label>
              Amount {index + 1}
              <input
                name={`budget-amount-${index}`}
                type="number"
                min={0}
                step="any"
                required
                value={row.amount}
                onChange={(event) => setRow(row.id, { amount: event.target.value })}
              />
            </label>
            <label>
              Period {index + 1}
              <input
                name={`budget-period-${index}`}
                required
                list="budget-periods"
                value={row.period}
                placeholder="5h, 7d, daily, weekly…"
                onChange={(event) => setRow(row.id, { period: event.target.value })}
              />
            </label>
            <label>
              Time zone {index + 1}
              <input
                name={`budget-timezone-${index}`}
                value={row.timezone}
                placeholder="UTC"
                onChange={(event) => setRow(row.id, { timezone: event.target.value })}
              />
            </label>
            <button
              type="button"
              className="secondary"
              aria-label={`Remove budget window ${index + 1}`}
              onClick={() =>
                set(
                  'budgets',
                  values.budgets.filter((other) => other.id !== row.id),
                )
              }
            >
              Remove
            </button>
          </div>
        ))}
        <datalist id="budget-periods">
          {['1h', '5h', '24h', '7d', '30d', 'daily', 'weekly', 'monthly', 'quarterly'].map((period) => (
            <option key={period} value={period} />
          ))}
        </datalist>
        {values.budgets.length < 8 ? (
          <button
            type="button"
            className="secondary"
            onClick={() => set('budgets', [...values.budgets, { id: ++rowIds, amount: '1', period: '', timezone: zone }])}
          >
            Add budget window
          </button>
        ) : null}
      </fieldset>
      <label>
        Expires ({zone}; empty: never)
        <input name="expires_at" type="datetime-local" value={values.expires} onChange={(event) => set('expires', event.target.value)} />
      </label>
      <div className="row">
        <label>
          Model allowlist (one per line; empty: every model)
          <textarea name="model_whitelist" rows={3} value={values.models} onChange={(event) => set('models', event.target.value)} />
        </label>
        <label>
          IP allowlist (addresses or CIDR blocks, one per line; empty: any)
          <textarea name="ip_whitelist" rows={3} value={values.ips} onChange={(event) => set('ips', event.target.value)} />
        </label>
      </div>
      <button type="submit" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}

type Dialog =
  | { kind: 'create' }
  | { kind: 'created'; key: string }
  | { kind: 'edit'; record: ProxyKeyRecord }
  | { kind: 'remove'; record: ProxyKeyRecord }
  | { kind: 'delete-all' }
  | { kind: 'regen' }
  | { kind: 'regenerated'; key: string }
  | null;

const DELETE_ALL_PHRASE = 'delete all keys';

export function KeysPage() {
  const zone = useTimeZone();
  const client = useQueryClient();
  const [dialog, setDialog] = useState<Dialog>(null);
  const [confirmText, setConfirmText] = useState('');
  const keys = useQuery({ queryKey: ['proxy-keys'], queryFn: () => api<ProxyKeyRecord[]>('/v1/auth/proxy') });
  const refresh = () => client.invalidateQueries({ queryKey: ['proxy-keys'] });

  const create = useMutation({
    mutationFn: (values: KeyFormValues) => api<ProxyKeyRecord>('/v1/auth/proxy/create', { method: 'POST', body: bodyOf(values, zone) }),
    onSuccess: (record) => {
      setDialog({ kind: 'created', key: record.key });
      void refresh();
    },
  });
  const update = useMutation({
    mutationFn: ({ record, values }: { record: ProxyKeyRecord; values: KeyFormValues }) =>
      api('/v1/auth/proxy/update', { method: 'POST', body: { proxy_key: record.key, ...bodyOf(values, zone) } }),
    onSuccess: () => {
      setDialog(null);
      void refresh();
    },
  });
  const toggle = useMutation({
    mutationFn: (record: ProxyKeyRecord) => api('/v1/auth/proxy/toggle', { method: 'POST', body: { proxy_key: record.key } }),
    onSuccess: () => void refresh(),
  });
  const remove = useMutation({
    mutationFn: (record: ProxyKeyRecord) => api('/v1/auth/proxy/remove', { method: 'POST', body: { proxy_key: record.key } }),
    onSuccess: () => {
      setDialog(null);
      void refresh();
    },
  });
  const deleteAll = useMutation({
    mutationFn: () => api('/v1/auth/proxy/delete', { method: 'DELETE' }),
    onSuccess: () => {
      setDialog(null);
      void refresh();
    },
  });
  const regen = useMutation({
    mutationFn: () => api<{ key: string }>('/v1/auth/key/regen'),
    onSuccess: async (answer) => {
      setDialog({ kind: 'regenerated', key: answer.key });
      // This session follows the new key (others of the old key ended): show its masked value.
      const session = await readSession().catch(() => null);
      if (session) sessionStore.set(session);
    },
  });

  const columns = useMemo(
    () =>
      helper.columns([
        helper.accessor('name', { header: 'Name', cell: (info) => <strong>{info.getValue()}</strong> }),
        helper.accessor('key', { header: 'Key', cell: (info) => <code>{maskKey(info.getValue())}</code> }),
        helper.accessor((record) => stateOf(record), {
          id: 'state',
          header: 'State',
          cell: (info) => <span className={`badge ${info.getValue()}`}>{info.getValue()}</span>,
        }),
        helper.accessor((record) => record, {
          id: 'spend',
          header: 'Spend',
          cell: (info) => {
            const record = info.getValue();
            return (
              <>
                {formatCredits(record.used_ammount)} / {formatCredits(record.allocated_ammount)} {record.spend_window ?? 'lifetime'}
                {record.budgets.slice(1).map((budget) => (
                  <div key={budget.period} className="hint">
                    {budget.period}: {formatCredits(budget.used)} / {formatCredits(budget.amount)}
                    {budget.timezone !== 'UTC' ? ` (${budget.timezone})` : ''}
                  </div>
                ))}
              </>
            );
          },
        }),
        helper.accessor('expires_at', { header: 'Expires', cell: (info) => expiryText(info.getValue(), zone) }),
        helper.accessor('model_whitelist', { header: 'Models', cell: (info) => (info.getValue().length ? info.getValue().join(', ') : 'any') }),
        helper.accessor('ip_whitelist', { header: 'IPs', cell: (info) => (info.getValue().length ? info.getValue().join(', ') : 'any') }),
        helper.accessor('last_used', { header: 'Last used', cell: (info) => formatTime(info.getValue(), zone) }),
        helper.display({
          id: 'actions',
          header: 'Actions',
          cell: (info) => {
            const record = info.row.original;
            return (
              <div className="actions">
                <button type="button" className="secondary" onClick={() => setDialog({ kind: 'edit', record })} aria-label={`Edit ${record.name}`}>
                  Edit
                </button>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => toggle.mutate(record)}
                  aria-label={`${record.is_active ? 'Turn off' : 'Turn on'} ${record.name}`}
                >
                  {record.is_active ? 'Turn off' : 'Turn on'}
                </button>
                <button type="button" className="danger" onClick={() => setDialog({ kind: 'remove', record })} aria-label={`Remove ${record.name}`}>
                  Remove
                </button>
              </div>
            );
          },
        }),
      ]),
    // toggle.mutate is stable; the zone changes how times read.
    [zone],
  );
  const data = useMemo(() => keys.data ?? [], [keys.data]);
  const table = useTable({ features, columns, data });

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">Keys</h1>
      <div className="toolbar">
        <button type="button" onClick={() => setDialog({ kind: 'create' })}>
          Create proxy key
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => {
            setConfirmText('');
            setDialog({ kind: 'delete-all' });
          }}
          disabled={!keys.data?.length}
        >
          Delete all proxy keys
        </button>
        <button type="button" className="danger" onClick={() => setDialog({ kind: 'regen' })}>
          Regenerate master key
        </button>
      </div>
      <ErrorNote error={keys.error || toggle.error} />
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Proxy keys table">
        <table className="keys-table">
          <caption className="visually-hidden">Proxy keys of the account</caption>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => (
                  <th key={header.id} scope="col">
                    {header.isPlaceholder ? null : <table.FlexRender header={header} />}
                  </th>
                ))}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((row) => (
              <tr key={row.id} data-key-name={row.original.name}>
                {row.getAllCells().map((cell) => (
                  <td key={cell.id} data-label={String(cell.column.columnDef.header ?? '')}>
                    <table.FlexRender cell={cell} />
                  </td>
                ))}
              </tr>
            ))}
            {keys.data && keys.data.length === 0 ? (
              <tr>
                <td colSpan={columns.length}>No proxy keys yet.</td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>

      <Modal title="Create proxy key" open={dialog?.kind === 'create'} onClose={() => setDialog(null)} variant="wide">
        <KeyForm initial={emptyForm()} submitLabel="Create key" busy={create.isPending} onSubmit={(values) => create.mutate(values)} />
        <ErrorNote error={create.error} />
      </Modal>
      <Modal title="Proxy key created" open={dialog?.kind === 'created'} onClose={() => setDialog(null)}>
        {dialog?.kind === 'created' ? <SecretOnce label="The new proxy key." value={dialog.key} /> : null}
        <button type="button" onClick={() => setDialog(null)}>
          Done
        </button>
      </Modal>
      <Modal title="Edit proxy key" open={dialog?.kind === 'edit'} onClose={() => setDialog(null)} variant="wide">
        {dialog?.kind === 'edit' ? (
          <KeyForm
            initial={formOf(dialog.record, zone)}
            submitLabel="Save changes"
            busy={update.isPending}
            onSubmit={(values) => update.mutate({ record: dialog.record, values })}
          />
        ) : null}
        <ErrorNote error={update.error} />
      </Modal>
      <Modal title="Remove proxy key" open={dialog?.kind === 'remove'} onClose={() => setDialog(null)}>
        {dialog?.kind === 'remove' ? (
          <>
            <p>
              Remove <strong>{dialog.record.name}</strong> ({maskKey(dialog.record.key)})? Requests with it are refused at once.
            </p>
            <div className="actions">
              <button type="button" className="danger" onClick={() => remove.mutate(dialog.record)} disabled={remove.isPending}>
                Remove key
              </button>
              <button type="button" className="secondary" onClick={() => setDialog(null)}>
                Cancel
              </button>
            </div>
            <ErrorNote error={remove.error} />
          </>
        ) : null}
      </Modal>
      <Modal title="Delete all proxy keys" open={dialog?.kind === 'delete-all'} onClose={() => setDialog(null)}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (confirmText === DELETE_ALL_PHRASE) deleteAll.mutate();
          }}
        >
          <p>
            Every proxy key of the account ({keys.data?.length ?? 0}) is deleted; this cannot be undone. Type <strong>{DELETE_ALL_PHRASE}</strong> to confirm.
          </p>
          <label>
            Confirmation
            <input name="confirm" value={confirmText} onChange={(event) => setConfirmText(event.target.value)} autoComplete="off" />
          </label>
          <button type="submit" className="danger" disabled={confirmText !== DELETE_ALL_PHRASE || deleteAll.isPending}>
            Delete every proxy key
          </button>
          <ErrorNote error={deleteAll.error} />
        </form>
      </Modal>
      <Modal title="Regenerate master key" open={dialog?.kind === 'regen'} onClose={() => setDialog(null)}>
        <p>
          A new master key is issued and the current one is refused at once, by every client that uses it. This console session carries on with the new key;
          other console sessions of the old key end. Proxy keys are not affected.
        </p>
        <div className="actions">
          <button type="button" className="danger" onClick={() => regen.mutate()} disabled={regen.isPending}>
            Regenerate
          </button>
          <button type="button" className="secondary" onClick={() => setDialog(null)}>
            Cancel
          </button>
        </div>
        <ErrorNote error={regen.error} />
      </Modal>
      <Modal title="New master key" open={dialog?.kind === 'regenerated'} onClose={() => setDialog(null)}>
        {dialog?.kind === 'regenerated' ? <SecretOnce label="The new master key." value={dialog.key} /> : null}
        <button type="button" onClick={() => setDialog(null)}>
          Done
        </button>
      </Modal>
    </section>
  );
}
