import { errorBody } from './error-formats';

describe('error formats', () => {
  it('writes each shape, with the request id on 5xx only', () => {
    expect(errorBody('detail', { status: 404, message: 'Proxy key not found' }, 'req_1')).toEqual({ detail: 'Proxy key not found' });
    expect(errorBody('detail', { status: 500, message: 'boom' }, 'req_1')).toEqual({ detail: 'boom', request_id: 'req_1' });
    expect(errorBody('openai', { status: 400, message: 'bad', param: 'model', code: 'invalid_request' }, 'r')).toEqual({
      error: { message: 'bad', type: 'invalid_request_error', code: 'invalid_request', param: 'model' },
    });
    expect(errorBody('anthropic', { status: 429, message: 'slow down' }, 'r')).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'slow down' },
    });
    expect(errorBody('anthropic', { status: 502, message: 'upstream' }, 'req_9')).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'upstream' },
      request_id: 'req_9',
    });
  });
});
