import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError, readSession, whenSessionEnds } from './api';
import { createConsoleRouter } from './router';
import { sessionStore } from './session';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 401 ends the session (api.ts); other errors are shown where they happen.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
      refetchOnWindowFocus: false,
      staleTime: 10_000,
    },
  },
});

const router = createConsoleRouter(queryClient);

whenSessionEnds(() => {
  queryClient.clear();
  const here = router.state.location;
  if (here.pathname !== '/sign-in') void router.navigate({ to: '/sign-in', replace: true });
});

async function main(): Promise<void> {
  sessionStore.set(await readSession().catch(() => null));
  createRoot(document.getElementById('root') as HTMLElement).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </StrictMode>,
  );
}

void main();
