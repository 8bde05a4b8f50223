import { LoggerService, LogLevel } from '@nestjs/common';
import pino, { Logger as Pino, LevelWithSilent } from 'pino';
import { activeTraceIds } from './tracing';

const PINO_LEVELS: Record<LogLevel, LevelWithSilent> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/**
 * Fields whose values never reach a log line, wherever they appear one level deep: a key header or
 * a key value logged by mistake is replaced before it is written.
 */
const REDACTED = ['authorization', 'apiKey', 'api_key', 'key_value', '*.authorization', '*["x-api-key"]', '*.apiKey', '*.api_key'];

/**
 * The process's JSON logger: one line per event with level, time, service, the Nest context and
 * the active trace and span ids. `LOG_LEVEL` takes Nest's names (`log` is pino's `info`).
 */
export function createJsonLogger(service: string, level: LogLevel, destination?: pino.DestinationStream): Pino {
  return pino(
    {
      level: PINO_LEVELS[level],
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => activeTraceIds(),
      redact: { paths: REDACTED, censor: '[masked]' },
    },
    destination,
  );
}

/** Nest's logger interface over pino, so the framework's and our own log lines are JSON alike. */
export class JsonLoggerService implements LoggerService {
  constructor(readonly pino: Pino) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params, true);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params, true);
  }

  /**
   * Nest passes the context (the logger's name) last, and for errors a stack before it:
   * `error(message, stack?, context?)`.
   */
  private write(level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal', message: unknown, params: unknown[], withStack = false): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const rest = [...params];
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const fields: Record<string, unknown> = context ? { context } : {};
    if (withStack && typeof rest[0] === 'string') fields.stack = rest.shift();
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ ...fields, ...(message as Record<string, unknown>) });
    } else {
      this.pino[level](fields, String(message));
    }
  }
}
