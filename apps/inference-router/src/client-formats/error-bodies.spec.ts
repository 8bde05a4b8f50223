import { errorBody, errorType } from './error-bodies';

describe('errorBody', () => {
  it('renders the OpenAI shape for chat and responses, with param', () => {
    expect(errorBody('chat', 400, 'messages: must not be empty', 'messages')).toEqual({
      error: { message: 'messages: must not be empty', type: 'invalid_request_error', code: null, param: 'messages' },
    });
    expect(errorBody('responses', 401, 'bad key')).toEqual({
      error: { message: 'bad key', type: 'authentication_error', code: 'invalid_api_key', param: null },
    });
  });

  it('renders the Anthropic shape for messages', () => {
    expect(errorBody('messages', 404, 'no such model', 'model')).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'no such model' },
    });
  });

  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [402, 'billing_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [409, 'invalid_request_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('maps status %i to %s', (status, type) => {
    expect(errorType(status)).toBe(type);
  });
});
