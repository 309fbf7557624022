import { describeError } from '#api';
import { Controller, Get, Inject } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';

/** A dependency the service needs before it can do its job; `probe` throws when it is not ready. */
export interface ReadinessCheck {
  name: string;
  probe: () => Promise<void>;
}

/** Injection token: the ReadinessCheck[] that /readyz runs. */
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[],
  ) {}

  /** Liveness: the process serves requests. */
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: every dependency answers (503 with the failing ones otherwise). */
  @Get('readyz')
  @HealthCheck()
  readyz() {
    return this.health.check(
      this.checks.map((c) => async () => {
        const session = this.indicators.check(c.name);
        try {
          await c.probe();
          return session.up();
        } catch (err) {
          return session.down({ message: describeError(err) });
        }
      }),
    );
  }
}
