import { type ImageGenerationResult, type ImageResultItem, MediaReply } from '@gateway/contracts';
import { FileUrls } from '@gateway/storage';
import type { FastifyReply } from 'fastify';

/**
 * Writes a router reply: a JSON body with its status, or generated images as the spec's result,
 * stored ones as file URLs (plain when public, signed and expiring otherwise).
 */
export function sendMediaReply(reply: FastifyReply, answer: MediaReply, urls?: FileUrls): FastifyReply {
  if (answer.kind === 'json') {
    if (answer.retryAfter !== undefined) void reply.header('retry-after', String(answer.retryAfter));
    return reply.status(answer.status).send(answer.body);
  }
  if (answer.kind === 'text') return reply.status(answer.status).type(answer.contentType).send(answer.body);
  if (answer.kind === 'sse') {
    const events = answer.events.map(({ event, data }) => `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`).join('');
    return reply.status(200).header('cache-control', 'no-cache').type('text/event-stream').send(events);
  }
  if (!urls) throw new Error('the router answered images on a route that does not generate them');
  const data = answer.images.map((image) => {
    const item: ImageResultItem = image.file ? { url: urls.urlFor(image.file.key, image.file.public) } : { b64_json: image.b64_json ?? '' };
    if (image.revised_prompt !== undefined) item.revised_prompt = image.revised_prompt;
    return item;
  });
  const result: ImageGenerationResult = { created: answer.created, data };
  if (answer.usage) result.usage = answer.usage as ImageGenerationResult['usage'];
  return reply.status(200).send(result);
}
