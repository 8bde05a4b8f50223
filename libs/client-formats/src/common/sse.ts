/** Server-sent-event framing. JSON.stringify escapes newlines, so a payload is always one `data:` line. */

/** An unnamed event (`data: ...`), as chat completion streams use. */
export function dataFrame(payload: unknown): string {
  return `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
}

/** A named event (`event: name` + `data: ...`), as the responses and messages streams use. */
export function eventFrame(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}
