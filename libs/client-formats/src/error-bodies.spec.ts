import { anthropicErrorType } from './messages/error-body';
import { openaiErrorCode, openaiErrorType } from './chat/error-body';
import { CLIENT_FORMATS } from './registry';
import { detailErrorBody } from './detail/error-body';
import { parseFrames } from './testing/spec-fixtures';

describe('error bodies', () => {
  it('chat and responses answer with the OpenAI body: the error code if any, else the status code, and param', () => {
    expect(CLIENT_FORMATS.chat.errorBody({ status: 400, message: 'messages: must not be empty', param: 'messages' })).toEqual({
      error: { message: 'messages: must not be empty', type: 'invalid_request_error', code: null, param: 'messages' },
    });
    expect(CLIENT_FORMATS.responses.errorBody({ status: 401, message: 'bad key' })).toEqual({
      error: { message: 'bad key', type: 'authentication_error', code: 'invalid_api_key', param: null },
    });
    expect(CLIENT_FORMATS.chat.errorBody({ status: 402, message: 'no credits', code: 'insufficient_credits' })).toEqual({
      error: { message: 'no credits', type: 'insufficient_quota', code: 'insufficient_credits', param: null },
    });
  });

  it('messages answers with the Anthropic body, without code or param', () => {
    expect(CLIENT_FORMATS.messages.errorBody({ status: 404, message: 'no such model', code: 'not_found', param: 'model' })).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'no such model' },
    });
  });

  it('the proxy-key routes answer {detail}', () => {
    expect(detailErrorBody({ status: 401, message: 'Invalid proxy key' })).toEqual({ detail: 'Invalid proxy key' });
  });

  it('a 5xx body carries the request id in every format, a 4xx body does not', () => {
    for (const format of Object.values(CLIENT_FORMATS)) {
      expect(format.errorBody({ status: 502, message: 'upstream' }, 'req_1')).toMatchObject({ request_id: 'req_1' });
      expect(format.errorBody({ status: 429, message: 'slow' }, 'req_1')).not.toHaveProperty('request_id');
    }
    expect(detailErrorBody({ status: 503, message: 'down' }, 'req_1')).toEqual({ detail: 'down', request_id: 'req_1' });
  });

  it('the responses stream error event continues the sequence and falls back to the status code', () => {
    expect(parseFrames([CLIENT_FORMATS.responses.streamErrorFrame({ status: 400, message: 'bad', param: 'input' }, undefined, 3)])).toEqual([
      { event: 'error', data: { type: 'error', code: 'invalid_request_error', message: 'bad', param: 'input', sequence_number: 3 } },
    ]);
  });

  it.each([
    [400, 'invalid_request_error', null],
    [401, 'authentication_error', 'invalid_api_key'],
    [402, 'insufficient_quota', 'insufficient_quota'],
    [403, 'permission_error', null],
    [404, 'not_found_error', 'not_found'],
    [406, 'invalid_request_error', null],
    [409, 'conflict_error', null],
    [413, 'invalid_request_error', null],
    [415, 'invalid_request_error', null],
    [422, 'invalid_request_error', null],
    [429, 'rate_limit_error', 'rate_limit_exceeded'],
    [500, 'server_error', 'server_error'],
    [502, 'server_error', 'server_error'],
    [503, 'service_unavailable_error', 'server_error'],
    [504, 'server_error', 'server_error'],
    [529, 'server_error', 'server_error'],
  ])('OpenAI: status %i is type %s, code %p', (status, type, code) => {
    expect(openaiErrorType(status)).toBe(type);
    expect(openaiErrorCode(status)).toBe(code);
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
    [503, 'api_error'],
    [504, 'timeout_error'],
    [529, 'overloaded_error'],
  ])('Anthropic: status %i is type %s', (status, type) => {
    expect(anthropicErrorType(status)).toBe(type);
  });
});
