import type { CanonicalRequest } from '@gateway/canonical';

/**
 * The request as the upstream gets it: never asking for more output than the edge reserved credits
 * for. Edge and router derive the cap from one definition (`reservedOutputCap`), so a client's own
 * cap is the reserved one; the reserved cap is clamped to, not refused, because a difference can
 * only come from the gateway (edge and router at different versions during a rollout), never from
 * the client. Without a client cap the reserved one (the model's `max_output_tokens`, else 4096)
 * is sent, so an upstream's own default cannot exceed it either; a reasoning budget is kept below
 * it, since reasoning counts against the cap.
 */
export function withinReservedOutput(request: CanonicalRequest, reserved: number | undefined): CanonicalRequest {
  if (reserved === undefined) return request;
  const maxTokens = Math.min(request.maxTokens ?? reserved, reserved);
  const budget = request.reasoning?.budgetTokens;
  if (request.maxTokens === undefined && request.reasoning && budget !== undefined && budget >= maxTokens) {
    return { ...request, maxTokens, reasoning: { ...request.reasoning, budgetTokens: Math.max(1, maxTokens - 1) } };
  }
  return maxTokens === request.maxTokens ? request : { ...request, maxTokens };
}
