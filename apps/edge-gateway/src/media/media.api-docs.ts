/** What the embeddings, moderation and image routes answer besides the statuses every route has. */
export const mediaErrors = (invalid: string): Record<number, string> => ({
  400: `${invalid} \`param\` names the field. Also a model that serves other endpoints (the message lists them), or a request above 1,000,000 bytes of JSON (\`param: input\`).`,
  402: "Insufficient credits, or the proxy key's allocation is spent.",
  403: "The key may not use this model (a proxy key's whitelist, the default model included) or call from this address.",
  404: 'Model not in the catalog.',
  429: 'Rate limit reached, here or upstream.',
  502: 'Every upstream route failed with an error. Other upstream 4xx statuses are passed through with their message.',
  504: 'Every upstream route was unreachable or timed out.',
});
