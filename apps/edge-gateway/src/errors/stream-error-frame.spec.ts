import { streamErrorFrame } from './stream-error-frame';

const parse = (frame: string) => {
  const event = /^event: (.+)$/m.exec(frame)?.[1];
  const data = JSON.parse(/^data: (.+)$/m.exec(frame)![1]);
  return { event, data, terminated: frame.endsWith('\n\n') };
};

describe('streamErrorFrame', () => {
  const timeout = { status: 503, message: 'A gateway service did not answer in time; retry with backoff', code: 'service_unavailable' };

  it('ends each text format with its own error event, carrying the request id of a 5xx', () => {
    expect(parse(streamErrorFrame('chat', timeout, 'req_1', 5))).toEqual({
      event: undefined,
      data: { error: { message: timeout.message, type: 'service_unavailable_error', code: 'service_unavailable', param: null }, request_id: 'req_1' },
      terminated: true,
    });
    expect(parse(streamErrorFrame('messages', timeout, 'req_1', 5))).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: timeout.message }, request_id: 'req_1' },
      terminated: true,
    });
    expect(parse(streamErrorFrame('responses', timeout, 'req_1', 5))).toEqual({
      event: 'error',
      data: { type: 'error', code: 'service_unavailable', message: timeout.message, param: null, sequence_number: 5, request_id: 'req_1' },
      terminated: true,
    });
  });

  it('leaves the request id out of a client error', () => {
    expect(parse(streamErrorFrame('chat', { status: 429, message: 'slow down' }, 'req_1', 0)).data).not.toHaveProperty('request_id');
  });
});
