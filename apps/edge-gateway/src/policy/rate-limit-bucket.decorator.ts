import { SetMetadata } from '@nestjs/common';

export const RATE_LIMIT_BUCKET = 'policy:rate-limit-bucket';

/**
 * The route's requests count against the plan's per-minute request limit in a bucket of their own,
 * not the account's main one (as Anthropic limits token counting apart from generation): a client
 * that counts before every call (Claude Code's `/context` made 14 counts) does not use up the
 * requests its generations need.
 */
export const RateLimitBucket = (bucket: string): MethodDecorator => SetMetadata(RATE_LIMIT_BUCKET, bucket);
