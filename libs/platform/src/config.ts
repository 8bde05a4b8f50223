import 'reflect-metadata';
import { isIpOrCidr } from '@gateway/contracts';
import { plainToInstance } from 'class-transformer';
import { ValidationError, ValidatorConstraint, ValidatorConstraintInterface, validateSync } from 'class-validator';

export class InvalidEnvironmentError extends Error {}

function describe(errors: ValidationError[]): string[] {
  return errors.flatMap((error) => Object.values(error.constraints ?? {}).map((message) => `${error.property}: ${message}`));
}

/**
 * Reads the environment once at startup into a typed, validated config object. Every problem is
 * reported with the variable's name; the caller exits.
 */
export function parseEnv<T extends object>(schema: new () => T, env: NodeJS.ProcessEnv = process.env): T {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const config = plainToInstance(schema, present, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors = validateSync(config, { whitelist: true, forbidUnknownValues: false });
  if (errors.length > 0) {
    throw new InvalidEnvironmentError(`invalid environment:\n  ${describe(errors).join('\n  ')}`);
  }
  return config;
}

/** parseEnv for an app's entrypoint: prints the problem and exits with status 1. */
export function loadEnvOrExit<T extends object>(schema: new () => T, service: string): T {
  try {
    return parseEnv(schema);
  } catch (error) {
    if (error instanceof InvalidEnvironmentError) {
      console.error(`[${service}] ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
}

/** Splits a comma-separated variable into trimmed, non-empty items. */
export const splitList = (value: unknown): string[] =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : Array.isArray(value)
      ? (value as string[])
      : [];

/** class-validator constraint for a comma-separated list of IPs or CIDR blocks (empty allowed). */
@ValidatorConstraint({ name: 'ipOrCidrList' })
export class IpOrCidrList implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return splitList(value).every((item) => isIpOrCidr(item));
  }
}
