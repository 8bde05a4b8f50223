import { Handles } from '@gateway/platform';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import {
  AccountBudget,
  AccountBudgetRequest,
  AccountLogsRequest,
  AccountSummaryRequest,
  AccountUsageRequest,
  LogsPage,
  Rpc,
  UsageSeries,
  UsageSummary,
} from '@gateway/contracts';
import { UsageService } from './usage.service';

@Controller()
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Handles(Rpc.accountSummary)
  summary(@Payload() request: AccountSummaryRequest): Promise<UsageSummary> {
    return this.usage.summary(request);
  }

  @Handles(Rpc.accountBudget)
  budget(@Payload() request: AccountBudgetRequest): Promise<AccountBudget> {
    return this.usage.budget(request);
  }

  @Handles(Rpc.accountUsage)
  series(@Payload() request: AccountUsageRequest): Promise<UsageSeries> {
    return this.usage.series(request);
  }

  @Handles(Rpc.accountLogs)
  logs(@Payload() request: AccountLogsRequest): Promise<LogsPage> {
    return this.usage.logs(request);
  }
}
