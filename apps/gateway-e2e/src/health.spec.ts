import { api } from './support/api';
import { suiteInfo } from './support/suite-info';

describe('health and request ids', () => {
  it('answers /healthz and /readyz without a key', async () => {
    const alive = await api('GET', '/healthz');
    expect(alive.status).toBe(200);
    expect(alive.body).toEqual({ status: 'ok' });
    const ready = await api('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      ready: true,
      checks: { redis: 'up', budget: 'up', 'key-service': 'up', 'account-service': 'up' },
    });
  });

  it('returns its own x-request-id on every response, and echoes a sane client id as x-client-request-id', async () => {
    const generated = await api('GET', '/v1/auth/proxy');
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(generated.headers.get('x-client-request-id')).toBeNull();
    for (const header of ['x-client-request-id', 'x-request-id']) {
      const echoed = await api('GET', '/healthz', { headers: { [header]: 'trace-123' } });
      expect(echoed.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
      expect(echoed.headers.get('x-client-request-id')).toBe('trace-123');
    }
    const both = await api('GET', '/healthz', { headers: { 'x-client-request-id': 'mine-1', 'x-request-id': 'proxy-2' } });
    expect(both.headers.get('x-client-request-id')).toBe('mine-1');
    const refused = await api('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(refused.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(refused.headers.get('x-client-request-id')).toBeNull();
  });

  it('answers unknown routes with 404 in the OpenAI error shape', async () => {
    const response = await api('GET', '/v1/nope', { base: suiteInfo().edgeB });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      error: { message: expect.any(String), type: 'not_found_error', code: 'not_found', param: null },
    });
  });
});
