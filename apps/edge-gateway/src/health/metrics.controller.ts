import { Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { MetricsController } from '@gateway/platform';
import { Public } from '../auth/auth.decorators';

/**
 * `GET /metrics` on the API port, beside the probes: the services' controller, outside `/v1` and
 * without a key (the edge's API-key guard needs `@Public()`), for the scraper.
 */
@ApiExcludeController()
@Controller()
@Public()
export class EdgeMetricsController extends MetricsController {}
