import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, ModelEntry } from '../api';
import { ErrorNote } from '../components';
import { formatCount } from '../format';

const price = (value: number | undefined): string => (value === undefined ? '—' : String(value));

export function ModelsPage() {
  const [filter, setFilter] = useState('');
  const models = useQuery({ queryKey: ['models'], queryFn: () => api<{ data: ModelEntry[] }>('/v1/models'), staleTime: 60_000 });
  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    return (models.data?.data ?? []).filter((model) => !needle || `${model.id} ${model.name ?? ''} ${model.owned_by ?? ''}`.toLowerCase().includes(needle));
  }, [models.data, filter]);
  return (
    <section aria-labelledby="models-title">
      <h1 id="models-title">Models</h1>
      <p className="hint">Prices in credits per million tokens (or per item / second where stated), as this key may use them.</p>
      <label className="inline">
        Filter models
        <input type="search" value={filter} onChange={(event) => setFilter(event.target.value)} name="filter" />
      </label>
      <ErrorNote error={models.error} />
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Models table">
        <table className="models-table">
          <caption className="visually-hidden">Model catalog</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Owner</th>
              <th scope="col">Context</th>
              <th scope="col">Input</th>
              <th scope="col">Output</th>
              <th scope="col">Cache read / write</th>
              <th scope="col">Other</th>
              <th scope="col">Routes</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((model) => (
              <tr key={model.id} data-model={model.id}>
                <th scope="row">
                  <code>{model.id}</code>
                  {model.name && model.name !== model.id ? <div className="hint">{model.name}</div> : null}
                </th>
                <td data-label="Owner">{model.owned_by ?? '—'}</td>
                <td data-label="Context">{formatCount(model.tokens)}</td>
                <td data-label="Input">{price(model.pricing?.input)}</td>
                <td data-label="Output">{price(model.pricing?.output)}</td>
                <td data-label="Cache">
                  {model.pricing?.cache_read === undefined && model.pricing?.cache_write === undefined
                    ? '—'
                    : `${price(model.pricing?.cache_read)} / ${price(model.pricing?.cache_write)}`}
                </td>
                <td data-label="Other">
                  {[
                    model.pricing?.per_item !== undefined ? `${model.pricing.per_item} per item` : '',
                    model.pricing?.per_second !== undefined ? `${model.pricing.per_second} per second` : '',
                    model.pricing?.characters !== undefined ? `${model.pricing.characters} per M characters` : '',
                  ]
                    .filter(Boolean)
                    .join(', ') || '—'}
                </td>
                <td data-label="Routes">{model.endpoints.join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
