import { Injectable } from '@nestjs/common';
import { chatFormat } from '@gateway/client-formats';
import { Observable } from 'rxjs';
import { errorReply } from '../errors/error-reply';
import { InflightRequests } from '../text-generation/inflight-requests';
import { CallOutcome, MeteredCall, MeteredCalls } from './metered-calls';

/** The error frame a framed answer ends with: the OpenAI error body and its status. */
export type ErrorFrame = ReturnType<typeof errorReply>;

/**
 * Metered calls whose answer goes to the edge in frames as it is made (speech, streamed
 * transcriptions): in flight under the request id, so an edge that cancels it aborts the work's
 * `signal`; one usage event as every metered call; any failure, before or after the first frame,
 * one `json` error frame (the edge ends an answer already started with it).
 */
@Injectable()
export class FramedCalls {
  constructor(
    private readonly metered: MeteredCalls,
    private readonly inflight: InflightRequests,
  ) {}

  frames<Frame>(
    call: Omit<MeteredCall, 'signal'>,
    work: (outcome: CallOutcome, signal: AbortSignal, emit: (frame: Frame) => void) => Promise<void>,
  ): Observable<Frame | ErrorFrame> {
    return new Observable((subscriber) => {
      const emit = (frame: Frame | ErrorFrame): void => {
        if (!subscriber.closed) subscriber.next(frame);
      };
      this.run(call, work, emit).then(
        () => subscriber.complete(),
        (error: unknown) => subscriber.error(error),
      );
    });
  }

  private async run<Frame>(
    call: Omit<MeteredCall, 'signal'>,
    work: (outcome: CallOutcome, signal: AbortSignal, emit: (frame: Frame) => void) => Promise<void>,
    emit: (frame: Frame | ErrorFrame) => void,
  ): Promise<void> {
    const { requestId } = call.caller;
    const abort = this.inflight.register(requestId);
    try {
      const failure = await this.metered.run(
        { ...call, signal: abort.signal },
        async (outcome) => {
          await work(outcome, abort.signal, emit);
          return undefined;
        },
        (error) => errorReply(chatFormat, error, requestId),
      );
      if (failure) emit(failure);
    } finally {
      this.inflight.release(requestId, abort);
    }
  }
}
