import type { IncomingMessage } from 'node:http';
import { rewriteLegacyUrl } from './legacy-urls';

const request = (method: string, url: string) => ({ method, url }) as IncomingMessage;

describe('rewriteLegacyUrl', () => {
  it('sends GET /v1/auth/proxy/ (with or without a query) to the legacy lookup', () => {
    expect(rewriteLegacyUrl(request('GET', '/v1/auth/proxy/?proxy_key=ek-proxy-x'))).toBe('/v1/auth/proxy-query-lookup?proxy_key=ek-proxy-x');
    expect(rewriteLegacyUrl(request('GET', '/v1/auth/proxy/'))).toBe('/v1/auth/proxy-query-lookup');
  });

  it('leaves the list route and every other URL alone', () => {
    expect(rewriteLegacyUrl(request('GET', '/v1/auth/proxy'))).toBe('/v1/auth/proxy');
    expect(rewriteLegacyUrl(request('GET', '/v1/auth/proxy/ek-proxy-x'))).toBe('/v1/auth/proxy/ek-proxy-x');
    expect(rewriteLegacyUrl(request('POST', '/v1/auth/proxy/'))).toBe('/v1/auth/proxy/');
  });
});
