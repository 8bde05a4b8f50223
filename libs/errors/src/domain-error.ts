import { DomainErrorPayload, ErrorCode, ErrorStatus } from './error-codes';

export interface DomainErrorOptions {
  /** The HTTP status when it is not the code's usual one (`ErrorStatus`): an upstream 4xx keeps its own. */
  status?: number;
  /** Seconds the caller should wait before retrying (a 429). */
  retryAfterSeconds?: number;
  /** What went wrong underneath (an upstream failure), for logs and for callers that answer it in their own terms. */
  cause?: unknown;
}

/** A failure the caller should hear about, with a code that each transport maps to its own shape. */
export class DomainError extends Error {
  /** The HTTP status the caller gets. */
  readonly status: number;
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.status = options.status ?? ErrorStatus[code];
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  toPayload(): DomainErrorPayload {
    const payload: DomainErrorPayload = { code: this.code, message: this.message };
    if (this.param !== undefined) payload.param = this.param;
    if (this.status !== ErrorStatus[this.code]) payload.status = this.status;
    return payload;
  }
}
