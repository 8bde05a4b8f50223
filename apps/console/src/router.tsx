import { QueryClient } from '@tanstack/react-query';
import { createRootRoute, createRoute, createRouter, Link, Outlet, redirect, useNavigate } from '@tanstack/react-router';
import { signOut } from './api';
import { KeysPage } from './pages/keys';
import { LogsPage, LogsSearch, parseLogsSearch } from './pages/logs';
import { ModelsPage } from './pages/models';
import { OverviewPage } from './pages/overview';
import { PlaygroundPage } from './pages/playground';
import { SettingsPage } from './pages/settings';
import { SignInPage } from './pages/sign-in';
import { isMaster, sessionStore, useSession } from './session';

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
