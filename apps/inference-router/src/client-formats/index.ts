/** Client side of format translation: parse client bodies, render replies, encode streams and errors. */
export { parseClientRequest, RequestValidationError, type ParsedClientRequest, type ParseOptions } from './parse-request';
export { renderResponse, type RenderContext } from './render-response';
export { createStreamEncoder, encodeStreamError, type StreamEncoder } from './stream-encoders';
export { errorBody, errorType, type AnthropicErrorBody, type OpenAIErrorBody } from './error-bodies';
