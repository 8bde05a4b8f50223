import { QueryClient } from '@tanstack/react-query';
import { createRootRoute, createRoute, createRouter, Link, Outlet, redirect, useNavigate } from '@tanstack/react-router';
import { signOut } from './api';
import { ErrorNote } from './components';
import { lazyPage } from './lazy-page';
import { LogsSearch, parseLogsSearch } from './logs-search';
import { SignInPage } from './pages/sign-in';
import { isMaster, sessionStore, useSession } from './session';

// Every page but sign-in is a chunk of its own, loaded when its route is first visited (or its link
// hovered): Recharts comes with the overview only, TanStack Table with the keys page.
const OverviewPage = lazyPage(() => import('./pages/overview'), 'OverviewPage');
const KeysPage = lazyPage(() => import('./pages/keys'), 'KeysPage');
const LogsPage = lazyPage(() => import('./pages/logs'), 'LogsPage');
const ModelsPage = lazyPage(() => import('./pages/models'), 'ModelsPage');
const PlaygroundPage = lazyPage(() => import('./pages/playground'), 'PlaygroundPage');
const SettingsPage = lazyPage(() => import('./pages/settings'), 'SettingsPage');

function Shell() {
  const session = useSession();
  const navigate = useNavigate();
  if (!session) return <Outlet />;
  const links: [string, string][] = [
    ['/', 'Overview'],
    ...(isMaster(session) ? ([['/keys', 'Keys']] as [string, string][]) : []),
    ['/logs', 'Logs'],
    ['/models', 'Models'],
    ['/playground', 'Playground'],
    ['/settings', 'Settings'],
  ];
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Model Gateway</span>
        <nav aria-label="Console">
          <ul>
            {links.map(([to, label]) => (
              <li key={to}>
                <Link to={to} activeOptions={{ exact: to === '/' }} activeProps={{ 'aria-current': 'page', className: 'active' }}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span data-testid="session-key" title="Signed-in key (masked)">
            {session.key_type} · {session.key}
          </span>
          <button
            type="button"
            className="secondary"
            onClick={async () => {
              await signOut();
              await navigate({ to: '/sign-in' });
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}

export function createConsoleRouter(queryClient: QueryClient) {
  const rootRoute = createRootRoute({ component: Shell });
  const requireSession = () => {
    if (!sessionStore.get()) throw redirect({ to: '/sign-in' });
  };
  const signInRoute = createRoute({
    getParentRoute: () => rootRoute,
    path: '/sign-in',
    beforeLoad: () => {
      if (sessionStore.get()) throw redirect({ to: '/' });
    },
    component: SignInPage,
  });
  const overviewRoute = createRoute({ getParentRoute: () => rootRoute, path: '/', beforeLoad: requireSession, component: OverviewPage });
  const keysRoute = createRoute({
    getParentRoute: () => rootRoute,
    path: '/keys',
    beforeLoad: () => {
      requireSession();
      if (!isMaster(sessionStore.get())) throw redirect({ to: '/' });
    },
    component: KeysPage,
  });
  const logsRoute = createRoute({
    getParentRoute: () => rootRoute,
    path: '/logs',
    beforeLoad: requireSession,
    validateSearch: (search: Record<string, unknown>): LogsSearch => parseLogsSearch(search),
    component: LogsPage,
  });
  const modelsRoute = createRoute({ getParentRoute: () => rootRoute, path: '/models', beforeLoad: requireSession, component: ModelsPage });
  const playgroundRoute = createRoute({ getParentRoute: () => rootRoute, path: '/playground', beforeLoad: requireSession, component: PlaygroundPage });
  const settingsRoute = createRoute({ getParentRoute: () => rootRoute, path: '/settings', beforeLoad: requireSession, component: SettingsPage });
  const routeTree = rootRoute.addChildren([signInRoute, overviewRoute, keysRoute, logsRoute, modelsRoute, playgroundRoute, settingsRoute]);
  return createRouter({
    routeTree,
    basepath: '/console',
    context: { queryClient },
    // A link hovered or focused starts loading its page's chunk.
    defaultPreload: 'intent',
    defaultPendingComponent: () => (
      <p role="status" className="hint">
        Loading…
      </p>
    ),
    defaultErrorComponent: ({ error }) => (
      <section>
        <h1>Something went wrong</h1>
        <ErrorNote error={error} />
        <p>
          <button type="button" onClick={() => window.location.reload()}>
            Reload
          </button>
        </p>
      </section>
    ),
    defaultNotFoundComponent: () => (
      <section>
        <h1>Not found</h1>
        <p>
          <Link to="/">Back to the overview</Link>
        </p>
      </section>
    ),
  });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
