import * as ipaddr from 'ipaddr.js';
import { ValidateIf, ValidationOptions, registerDecorator } from 'class-validator';
import { Transform } from 'class-transformer';

/**
 * An address written the standard way: IPv4 as four decimal parts (`10.0.0.1`, not `10`, `127.1` or
 * `0x7f.1`, which parsers also accept and a typo easily produces), or IPv6.
 */
function isStandardAddress(value: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(value) || ipaddr.IPv6.isValid(value);
}

/** An IPv4 or IPv6 address, or a CIDR block of either family (`10.0.0.0/8`, `fe80::/10`). */
export function isIpOrCidr(value: unknown): boolean {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return false;
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || !isStandardAddress(address)) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  try {
    ipaddr.parseCIDR(value);
    return true;
  } catch {
    return false;
  }
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
        validate: (value: unknown) => Number.isSafeInteger(value) && (value === -1 || (value as number) > Math.floor(Date.now() / 1000)),
      },
    });
}

/**
 * Text PostgreSQL can store: no NUL (U+0000) and no unpaired UTF-16 surrogate. Non-strings pass
 * (the type check refuses them). The edge refuses such text before it gets here; services check it
 * too, so no other caller can make a write fail with a 500.
 */
export function isStorableText(value: unknown): boolean {
  return typeof value !== 'string' || (!value.includes('\u0000') && (value as unknown as WellFormedCheck).isWellFormed());
}

/** `String.prototype.isWellFormed` (Node 20: no lone surrogate), not yet in the TypeScript lib this project compiles against. */
type WellFormedCheck = { isWellFormed(): boolean };

export function IsStorableText(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isStorableText',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `${options?.each ? 'each value in ' : ''}${String(propertyName)} must not contain a NUL character or an unpaired UTF-16 surrogate`,
        ...options,
      },
      validator: { validate: (value: unknown) => isStorableText(value) },
    });
}

/** Like `@IsOptional()`, but `null` is still validated (and so rejected by the type check). */
export const IsOptionalNotNull = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

/**
 * A query parameter that is an integer: decimal digits (an optional minus) become a number; any
 * other text (`1e3`, `0x10`, ` 12`, `12.0`, an empty value) stays a string, which `@IsInt()` refuses
 * with the parameter's name. `@Type(() => Number)` would take `Number(text)`: `1e3` as 1000, an empty
 * value as 0.
 */
export const IntegerParam = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^-?[0-9]+$/.test(value) ? Number(value) : value));
