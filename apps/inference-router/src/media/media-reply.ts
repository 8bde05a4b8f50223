import { MediaMessage, MediaReply, MediaReplyPart, MediaRequest, splitMediaReply } from '@gateway/contracts';
import { defer, from, mergeMap, Observable } from 'rxjs';
import { RouterLiveness } from '../liveness/router-liveness';

/** A reply as the NATS messages of a media subject: its parts, each emitted as its own message, in order. */
export function replyParts(reply: () => Promise<MediaReply>): Observable<MediaReplyPart> {
  return defer(reply).pipe(mergeMap((answer) => from(splitMediaReply(answer))));
}

/** `replyParts`, with the replica's heartbeats while it works when the edge asked for them. */
export function mediaMessages(request: MediaRequest, liveness: RouterLiveness, reply: () => Promise<MediaReply>): Observable<MediaMessage> {
  const parts = replyParts(reply);
  return request.heartbeats === true ? liveness.withHeartbeats(parts) : parts;
}
