import * as ipaddr from 'ipaddr.js';
import { ValidateIf, ValidationOptions, registerDecorator } from 'class-validator';

/** An IPv4 or IPv6 address, or a CIDR block of either family. */
export function isIpOrCidr(value: unknown): boolean {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return false;
  if (value.includes('/')) {
    try {
      ipaddr.parseCIDR(value);
      return true;
    } catch {
      return false;
    }
  }
  return ipaddr.isValid(value);
}

export function IsIpOrCidr(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isIpOrCidr',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must contain IP addresses or CIDR blocks`, ...options },
      validator: { validate: (value: unknown) => isIpOrCidr(value) },
    });
}

/** `-1` (never) or a Unix time in whole seconds that is still in the future. */
export function IsExpiry(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isExpiry',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `${String(propertyName)} must be -1 (never) or a future Unix time in seconds`,
        ...options,
      },
      validator: {
        validate: (value: unknown) =>
          Number.isSafeInteger(value) && (value === -1 || (value as number) > Math.floor(Date.now() / 1000)),
      },
    });
}

/** Like `@IsOptional()`, but `null` is still validated (and so rejected by the type check). */
export const IsOptionalNotNull = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);
