/**
 * A page in a chunk of its own, loaded on demand: a dynamic import() of a script under
 * /console/assets/ (same origin: the CSP's `script-src 'self'` allows it). The router awaits
 * `preload` before it shows the route (and when a link to it is hovered or focused), so the page
 * renders at once; rendered before that, it suspends. A chunk that cannot be loaded (the console was
 * rebuilt while the tab was open, or the network failed) is an error the router shows, with a reload
 * button; the next visit to the route tries again. Unlike TanStack's lazyRouteComponent, nothing is
 * kept in sessionStorage.
 */
import { ComponentType, createElement, ReactElement, use } from 'react';

export type LazyPage = (() => ReactElement) & { preload: () => Promise<void> };

export function lazyPage<M extends Record<K, ComponentType>, K extends keyof M & string>(importer: () => Promise<M>, name: K): LazyPage {
  let page: ComponentType | undefined;
  let failure: unknown;
  let loading: Promise<void> | undefined;
  const preload = (): Promise<void> => {
    if (!loading) {
      failure = undefined;
      loading = importer().then(
        (module) => {
          page = module[name];
        },
        (error: unknown) => {
          failure = error;
          loading = undefined;
        },
      );
    }
    return loading;
  };
  function Lazy(): ReactElement {
    if (!page && !failure) use(preload());
    if (page) return createElement(page);
    const reason = failure instanceof Error ? failure.message : String(failure);
    throw new Error(`This page could not be loaded (${reason}). Reload to get the current console.`);
  }
  Lazy.displayName = `Lazy(${name})`;
  return Object.assign(Lazy, { preload });
}
