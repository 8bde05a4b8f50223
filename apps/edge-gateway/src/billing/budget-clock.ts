import { Body, Controller, HttpCode, Inject, Injectable, Put } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { IsInt, Min } from 'class-validator';
import { EdgeEnv } from '../config/edge.env';

/**
 * The time budget windows are read at (and the usage of an admitted request is stamped with, see
 * `CallerContext.admittedAt`): the system clock. With `EDGE_TEST_CLOCK=true` (tests only: the edge
 * refuses to start with it when `NODE_ENV=production`) a test may move it through
 * `PUT /v1/_test/clock`, to show windows resetting without waiting for them.
 */
@Injectable()
export class BudgetClock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Tests only: from now on the clock reads `at` (ms since the epoch) plus the time since. */
  moveTo(at: number): void {
    this.offsetMs = at - Date.now();
  }
}

export class MoveClockRequest {
  /** The moment the clock should read now, ms since the epoch. */
  @IsInt()
  @Min(0)
  at: number;
}

/** Registered only with `EDGE_TEST_CLOCK=true`: moves this replica's budget clock (any key of any account may). */
@ApiExcludeController()
@Controller('_test/clock')
export class TestClockController {
  constructor(
    private readonly clock: BudgetClock,
    @Inject(EdgeEnv) env: Pick<EdgeEnv, 'EDGE_TEST_CLOCK'>,
  ) {
    if (env.EDGE_TEST_CLOCK !== 'true') throw new Error('TestClockController is registered only with EDGE_TEST_CLOCK=true');
  }

  @Put()
  @HttpCode(200)
  move(@Body() request: MoveClockRequest): { now: number } {
    this.clock.moveTo(request.at);
    return { now: this.clock.now() };
  }
}
