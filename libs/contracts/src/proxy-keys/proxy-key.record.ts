import type { SpendWindow } from '../keys';

/** A proxy key as the API returns it; field names are the spec's, spelling included. */
export interface ProxyKeyRecord {
  name: string;
  key: string;
  user_id?: string;
  expires_at: number;
  allocated_ammount: number;
  used_ammount: number;
  spend_window: SpendWindow | null;
  is_active: boolean;
  model_whitelist: string[];
  ip_whitelist: string[];
  enabled_thinking?: boolean;
  created_at: number;
  last_used: number | null;
}

export interface MessageResponse {
  message: string;
}

export interface ToggleResponse extends MessageResponse {
  status: boolean;
}

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
