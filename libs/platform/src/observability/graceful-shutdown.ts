import { INestApplicationContext, Injectable, LoggerService } from '@nestjs/common';

interface DrainTask {
  name: string;
  run: () => Promise<void>;
}

/**
 * The process's shutdown state. On SIGTERM it runs the registered drain tasks (stop taking work:
 * NATS subscriptions, a JetStream consumer, a BullMQ worker), turns to draining (readiness answers
 * 503; the edge, which has no such task, does so at once and refuses new requests from then on)
 * and waits for the work in progress to finish, all within the grace period.
 */
@Injectable()
export class GracefulShutdown {
  private isDraining = false;
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly tasks: DrainTask[] = [];

  get draining(): boolean {
    return this.isDraining;
  }

  /** Work in progress (HTTP requests, NATS handlers) the drain waits for. */
  get inFlight(): number {
    return this.active;
  }

  /** Counts one piece of work until the returned function is called (once; later calls do nothing). */
  beginWork(): () => void {
    this.active++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.active--;
      if (this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    };
  }

  /** Runs `run` when draining starts, e.g. a worker that stops taking jobs and finishes its own. */
  onDrain(name: string, run: () => Promise<void>): void {
    this.tasks.push({ name, run });
  }

  /**
   * Starts draining and resolves once the drain tasks are done and no work is in progress, or when
   * `graceMs` is up: true if everything finished.
   */
  async drain(graceMs: number, logger?: LoggerService): Promise<boolean> {
    const finished = (async () => {
      await Promise.all(
        this.tasks.map((task) => task.run().catch((error: Error) => logger?.warn?.(`drain task ${task.name} failed: ${error.message}`, 'GracefulShutdown'))),
      );
      // Only now: a replica reported draining takes no new work.
      this.isDraining = true;
      if (this.active > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      return true;
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, graceMs, false)));
    const done = await Promise.race([finished, timeout]);
    clearTimeout(timer);
    this.isDraining = true;
    return done;
  }
}

export interface ShutdownSignalOptions {
  graceMs: number;
  logger: LoggerService;
  /** After the drain, before the app closes (e.g. close lingering connections). */
  afterDrain?: (completed: boolean) => void | Promise<void>;
  /** After the app closed (e.g. flush spans). */
  afterClose?: () => Promise<void>;
}

/**
 * Closes the app on SIGTERM or SIGINT after draining it (see GracefulShutdown), instead of Nest's
 * `enableShutdownHooks`, which would close connections that in-flight work still uses. Nest's
 * lifecycle hooks (onModuleDestroy, onApplicationShutdown) run in `app.close()` as usual. A second
 * signal ends the wait.
 */
export function closeOnShutdownSignals(app: INestApplicationContext, options: ShutdownSignalOptions): void {
  let closing = false;
  let skipWait: () => void = () => undefined;
  const onSignal = async (signal: NodeJS.Signals) => {
    if (closing) {
      options.logger.warn(`${signal} again: closing without waiting`, 'GracefulShutdown');
      skipWait();
      return;
    }
    closing = true;
    const shutdown = app.get(GracefulShutdown);
    options.logger.log(`${signal}: draining (${shutdown.inFlight} in flight, up to ${options.graceMs} ms)`, 'GracefulShutdown');
    const completed = await Promise.race([
      shutdown.drain(options.graceMs, options.logger),
      new Promise<boolean>((resolve) => (skipWait = () => resolve(false))),
    ]);
    if (!completed) options.logger.warn(`grace period over with ${shutdown.inFlight} still in flight; closing`, 'GracefulShutdown');
    let exitCode = 0;
    try {
      await options.afterDrain?.(completed);
      await app.close();
    } catch (error) {
      options.logger.error(`error while closing: ${(error as Error).stack ?? String(error)}`, undefined, 'GracefulShutdown');
      exitCode = 1;
    }
    await options.afterClose?.().catch(() => undefined);
    options.logger.log('closed', 'GracefulShutdown');
    process.exit(exitCode);
  };
  process.on('SIGTERM', (signal) => void onSignal(signal));
  process.on('SIGINT', (signal) => void onSignal(signal));
}
