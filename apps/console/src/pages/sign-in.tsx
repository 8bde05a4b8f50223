import { useNavigate } from '@tanstack/react-router';
import { FormEvent, useState } from 'react';
import { signIn } from '../api';
import { ErrorNote } from '../components';
import { sessionStore } from '../session';

export function SignInPage() {
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const field = form.elements.namedItem('key') as HTMLInputElement;
    setBusy(true);
    setError(null);
    try {
      const session = await signIn(field.value.trim());
      // The key leaves the page: only the session (masked key, CSRF token) is kept, in memory.
      field.value = '';
      sessionStore.set(session);
      await navigate({ to: '/' });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>Model Gateway console</h1>
      <form onSubmit={submit} aria-describedby="sign-in-help" autoComplete="off">
        <label htmlFor="key">API key</label>
        <input id="key" name="key" type="password" required autoComplete="off" spellCheck={false} placeholder="ek-…" />
        <p id="sign-in-help" className="hint">
          A master, proxy or DevPass key. The gateway exchanges it for a session cookie; this page does not keep the key.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}
