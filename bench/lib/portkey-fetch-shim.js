'use strict';
/**
 * Preloaded (`node --require`) into the Portkey gateway process only, never into our services.
 *
 * Portkey 1.15.2 adds its `x-portkey-*` headers to the upstream response after wrapping it with
 * `new Response(stream, upstreamResponse)`. @hono/node-server ≥ 1.14.3 (1.19.x is what npm installs
 * here) replaces the global `Response` with a lightweight class that, given a native fetch Response
 * as init, keeps that response's Headers object, whose guard is "immutable". Every streamed chat
 * completion then fails with `TypeError: immutable` and a 500 "Something went wrong".
 * Upstream: https://github.com/Portkey-AI/gateway/issues/1389 (and #1550, fix proposed in #1551).
 *
 * The workaround: hand Portkey fetch responses whose headers are a mutable copy, as the proposed
 * fix does. It costs one Response wrapper per upstream call and changes nothing else.
 * `BENCH_PORTKEY_SHIM=0` runs Portkey without it.
 */
const nativeFetch = globalThis.fetch;
const NativeResponse = globalThis.Response;

globalThis.fetch = async function fetchWithMutableHeaders(...args) {
  const response = await nativeFetch(...args);
  try {
    return new NativeResponse(response.body, {
      status: response.status,
      statusText: response.statusText,
      headers: new Headers(response.headers),
    });
  } catch {
    return response; // statuses a constructed Response cannot carry: leave it as it was
  }
};
