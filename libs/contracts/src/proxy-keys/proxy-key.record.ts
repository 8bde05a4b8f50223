export const ProxyKeyMessages = {
  updated: 'Proxy key updated',
  statusUpdated: 'Proxy key status updated',
  deleted: 'Proxy key deleted',
  deletedAll: 'Proxy keys deleted',
  notFound: 'Proxy key not found',
  expired: 'Proxy key has expired',
  inactive: 'Proxy key is inactive',
  ipNotAllowed: 'IP address not in whitelist',
  accessGranted: 'Access granted',
  modelNotAllowed: (model: string) => `Model '${model}' not in whitelist`,
  allocationAboveDailyLimit: (limit: string) => `Allocated ammount cannot exceed your daily limit of ${limit}`,
} as const;
