import { clientRequestId } from './client-request-id';

describe('clientRequestId', () => {
  it('prefers x-client-request-id, else takes x-request-id', () => {
    expect(clientRequestId({ headers: { 'x-client-request-id': 'mine', 'x-request-id': 'proxy' } })).toBe('mine');
    expect(clientRequestId({ headers: { 'x-request-id': 'from-a-proxy.1:2' } })).toBe('from-a-proxy.1:2');
    expect(clientRequestId({ headers: {} })).toBeUndefined();
  });

  it('ignores values that are not 1 to 128 letters, digits or ._:- (falling back to the other header)', () => {
    expect(clientRequestId({ headers: { 'x-request-id': 'has spaces' } })).toBeUndefined();
    expect(clientRequestId({ headers: { 'x-request-id': 'a'.repeat(129) } })).toBeUndefined();
    expect(clientRequestId({ headers: { 'x-request-id': 'a'.repeat(128) } })).toBe('a'.repeat(128));
    expect(clientRequestId({ headers: { 'x-client-request-id': '<script>', 'x-request-id': 'ok-1' } })).toBe('ok-1');
    expect(clientRequestId({ headers: { 'x-client-request-id': '' } })).toBeUndefined();
  });
});
