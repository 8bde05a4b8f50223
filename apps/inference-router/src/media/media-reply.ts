import { MediaReply, MediaReplyPart, splitMediaReply } from '@gateway/contracts';
import { defer, from, mergeMap, Observable } from 'rxjs';

/** A reply as the NATS messages of a media subject: its parts, each emitted as its own message, in order. */
export function replyParts(reply: () => Promise<MediaReply>): Observable<MediaReplyPart> {
  return defer(reply).pipe(mergeMap((answer) => from(splitMediaReply(answer))));
}
