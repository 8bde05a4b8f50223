import { ErrorCode } from './error-codes';
import { DomainError } from './domain-error';

describe('DomainError', () => {
  it("takes its code's usual status, or an explicit one, which only then travels in the payload", () => {
    const usual = new DomainError(ErrorCode.NotFound, 'no such model', 'model');
    expect(usual.status).toBe(404);
    expect(usual.toPayload()).toEqual({ code: 'not_found', message: 'no such model', param: 'model' });
    const passedThrough = new DomainError(ErrorCode.InvalidRequest, 'unprocessable', undefined, { status: 422 });
    expect(passedThrough.status).toBe(422);
    expect(passedThrough.toPayload()).toEqual({ code: 'invalid_request', message: 'unprocessable', status: 422 });
  });

  it('keeps its cause and retry hint', () => {
    const upstream = new Error('429 from upstream');
    const error = new DomainError(ErrorCode.ModelRateLimited, 'busy', undefined, { cause: upstream, retryAfterSeconds: 5 });
    expect(error).toMatchObject({ status: 429, retryAfterSeconds: 5, cause: upstream });
  });
});
