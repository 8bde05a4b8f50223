import { DomainErrorPayload, ErrorCode } from '@gateway/contracts';

/** A failure the caller should hear about, with a code that each transport maps to its own shape. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  toPayload(): DomainErrorPayload {
    return this.param === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, param: this.param };
  }
}
