import type { CanonicalRequest } from '@gateway/canonical';
import { createHash } from 'node:crypto';

/**
 * The stickiness key of a text request, so one conversation keeps its upstream route (and the
 * provider's prompt cache): the client's `prompt_cache_key`, else its end-user id (`user`,
 * `metadata.user_id`), else a hash of the system prompt and the first message, which every turn of
 * a conversation repeats.
 */
export function affinityKey(request: CanonicalRequest, body?: Record<string, unknown>): string {
  const cacheKey = body?.['prompt_cache_key'];
  if (typeof cacheKey === 'string' && cacheKey.length > 0) return `k:${cacheKey}`;
  const metadataUser = (body?.['metadata'] as Record<string, unknown> | undefined)?.['user_id'];
  const user = request.user ?? (typeof metadataUser === 'string' ? metadataUser : undefined);
  if (user) return `u:${user}`;
  return `h:${createHash('sha256')
    .update(JSON.stringify([request.system ?? '', request.messages[0] ?? null]))
    .digest('base64url')}`;
}
