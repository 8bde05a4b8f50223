import { RawFrame } from '@gateway/platform';
import type { SseFrameState } from '@gateway/contracts';

/** The most characters of events one joined frame carries (well under NATS's 1 MiB message limit, at up to 3 bytes each). */
export const MAX_JOINED_EVENTS_LENGTH = 64 * 1024;

/** The head of an `sse-bytes` frame: its kind, its event count and the stream's state (see `TextFrame`). */
export type SseBytesHead = { kind: 'sse-bytes'; events: number } & SseFrameState;

/**
 * A stream's events as a raw `sse-bytes` frame (see `TextFrame`). Frames that follow each other
 * before the router's next NATS write join into one (`RawFrame.joinedWith`): the events in order,
 * their count summed, the token counts of the later one (they are what the client has been sent
 * so far), the replica's name of the first, and `last` when the later one is last. Nothing joins
 * a last frame, and a join stops at `MAX_JOINED_EVENTS_LENGTH`.
 */
export class SseBytesFrame extends RawFrame {
  constructor(
    override readonly head: SseBytesHead,
    body: string,
  ) {
    super(head, body);
  }

  override joinedWith(later: RawFrame): SseBytesFrame | undefined {
    if (!(later instanceof SseBytesFrame) || this.head.last || this.body.length + later.body.length > MAX_JOINED_EVENTS_LENGTH) return undefined;
    const { head } = later;
    return new SseBytesFrame(
      {
        kind: 'sse-bytes',
        events: this.head.events + head.events,
        inputTokens: head.inputTokens ?? this.head.inputTokens,
        outputTokens: head.outputTokens ?? this.head.outputTokens,
        last: head.last,
        router: this.head.router ?? head.router,
      },
      this.body + later.body,
    );
  }
}
