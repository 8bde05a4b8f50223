import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { AccountBudget, AccountBudgetRequest, AccountLogsRequest, AccountSummaryRequest, LogsPage, Subjects, UsageSummary } from '@gateway/contracts';
import { UsageService } from './usage.service';

@Controller()
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @MessagePattern(Subjects.accountSummary)
  summary(@Payload() request: AccountSummaryRequest): Promise<UsageSummary> {
    return this.usage.summary(request);
  }

  @MessagePattern(Subjects.accountBudget)
  budget(@Payload() request: AccountBudgetRequest): Promise<AccountBudget> {
    return this.usage.budget(request);
  }

  @MessagePattern(Subjects.accountLogs)
  logs(@Payload() request: AccountLogsRequest): Promise<LogsPage> {
    return this.usage.logs(request);
  }
}
