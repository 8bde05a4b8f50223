import { useQuery } from '@tanstack/react-query';
import { FormEvent, useRef, useState } from 'react';
import { api, apiRaw, ModelEntry } from '../api';
import { ErrorNote } from '../components';

/** Reads `data:` lines of a server-sent event stream, calling `onData` with each payload. */
async function readEvents(body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).replace(/\r$/, '');
      buffer = buffer.slice(end + 1);
      if (line.startsWith('data:')) onData(line.slice(5).trim());
    }
  }
}

function Chat({ models }: { models: ModelEntry[] }) {
  const [model, setModel] = useState('');
  const [output, setOutput] = useState('');
  const [requestId, setRequestId] = useState<string | null>(null);
  const [state, setState] = useState<'idle' | 'streaming' | 'done'>('idle');
  const [error, setError] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);
  const chosen = model || models[0]?.id || '';

  async function send(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const controller = new AbortController();
    abort.current = controller;
    setOutput('');
    setError(null);
    setRequestId(null);
    setState('streaming');
    try {
      const response = await apiRaw('/v1/chat/completions', {
        method: 'POST',
        signal: controller.signal,
        headers: { accept: 'text/event-stream' },
        body: {
          model: chosen,
          stream: true,
          max_tokens: Number(form.get('max_tokens')) || 256,
          messages: [
            ...(String(form.get('system') ?? '').trim() ? [{ role: 'system', content: String(form.get('system')) }] : []),
            { role: 'user', content: String(form.get('prompt') ?? '') },
          ],
        },
      });
      setRequestId(response.headers.get('x-request-id'));
      if (!response.body) throw new Error('The answer has no body');
      await readEvents(response.body, (data) => {
        if (data === '[DONE]') return;
        const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; error?: { message: string } };
        if (chunk.error) throw new Error(chunk.error.message);
        const piece = chunk.choices?.[0]?.delta?.content;
        if (piece) setOutput((old) => old + piece);
      });
      setState('done');
    } catch (caught) {
      if (!(caught instanceof DOMException && caught.name === 'AbortError')) setError(caught);
      setState('done');
    }
  }

  return (
    <form onSubmit={send} className="playground" aria-labelledby="chat-title">
      <h2 id="chat-title">Chat (streamed)</h2>
      <div className="row">
        <div className="field">
          <label htmlFor="playground-model">Model</label>
          <select id="playground-model" name="model" value={chosen} onChange={(event) => setModel(event.target.value)}>
            {models.map((entry) => (
              <option key={entry.id} value={entry.id}>
                {entry.id}
              </option>
            ))}
          </select>
        </div>
        <label>
          Max tokens
          <input name="max_tokens" type="number" min={1} max={4096} defaultValue={128} />
        </label>
      </div>
      <label>
        System prompt (optional)
        <textarea name="system" rows={2} />
      </label>
      <label>
        Message
        <textarea name="prompt" rows={4} required defaultValue="Say hello in five words." />
      </label>
      <div className="actions">
        <button type="submit" disabled={state === 'streaming' || !chosen}>
          Send
        </button>
        <button type="button" className="secondary" disabled={state !== 'streaming'} onClick={() => abort.current?.abort()}>
          Stop
        </button>
      </div>
      <ErrorNote error={error} />
      <h3>Answer</h3>
      <output className="answer" data-testid="chat-output" data-state={state} aria-live="polite" aria-busy={state === 'streaming'}>
        {output}
      </output>
      {requestId ? (
        <p className="hint">
          Request id <code data-testid="chat-request-id">{requestId}</code> (find it in Logs)
        </p>
      ) : null}
    </form>
  );
}

function Decision() {
  const [answer, setAnswer] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [type, setType] = useState<'choice' | 'score' | 'noul'>('choice');

  async function decide(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const options = String(form.get('options') ?? '')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    const question: Record<string, unknown> = { type, instructions: String(form.get('instructions') ?? '') };
    if (type === 'choice') question.criteria = Object.fromEntries(options.map((option) => [option, null]));
    if (type === 'score') question.criteria = options;
    setBusy(true);
    setError(null);
    setAnswer(null);
    try {
      setAnswer(await api('/v1/decisions', { method: 'POST', body: { model: 'jev', state: String(form.get('state') ?? ''), questions: { q: question } } }));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={decide} className="playground" aria-labelledby="decision-title">
      <h2 id="decision-title">Decision</h2>
      <label>
        State (the facts)
        <textarea name="state" rows={3} required defaultValue="The basket holds a banana." />
      </label>
      <div className="row">
        <div className="field">
          <label htmlFor="playground-type">Question type</label>
          <select id="playground-type" name="type" value={type} onChange={(event) => setType(event.target.value as typeof type)}>
            <option value="choice">choice (pick one)</option>
            <option value="score">score (a level)</option>
            <option value="noul">noul (yes or no)</option>
          </select>
        </div>
        <label>
          Instructions
          <input name="instructions" required defaultValue="Which fruit is in the basket?" />
        </label>
      </div>
      {type !== 'noul' ? (
        <label>
          {type === 'choice' ? 'Options' : 'Levels, lowest first'} (one per line)
          <textarea name="options" rows={3} required defaultValue={type === 'choice' ? 'apple\nbanana\ngrape' : 'unripe\nripe\noverripe'} />
        </label>
      ) : null}
      <button type="submit" disabled={busy}>
        Decide
      </button>
      <ErrorNote error={error} />
      {answer ? (
        <pre className="answer" data-testid="decision-output">
          {JSON.stringify(answer, null, 2)}
        </pre>
      ) : null}
    </form>
  );
}

export function PlaygroundPage() {
  const models = useQuery({ queryKey: ['models'], queryFn: () => api<{ data: ModelEntry[] }>('/v1/models'), staleTime: 60_000 });
  const chatModels = (models.data?.data ?? []).filter((model) => model.endpoints.includes('chat.completions'));
  return (
    <section aria-labelledby="playground-title">
      <h1 id="playground-title">Playground</h1>
      <p className="hint">Requests made here are real: they are charged and logged like any other request of the signed-in key.</p>
      <ErrorNote error={models.error} />
      <div className="two-columns">
        <Chat models={chatModels} />
        <Decision />
      </div>
    </section>
  );
}
