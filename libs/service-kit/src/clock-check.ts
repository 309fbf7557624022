/**
 * The clock check (docs/concepts/accounting.md, "Clocks"): claims carry wall-clock times written by a
 * webhook replica and judged by the reconciler, so the limit needs their clocks within L - 34 s of each
 * other. Each service compares its own clock with the Karmada API server's, the one clock every write
 * passes, from the `Date` header of a cheap call; two services each within half the bound of it are
 * within the bound of each other, whichever runs ahead.
 */
import * as k8s from '@kubernetes/client-node';
import { Logger, Module, type DynamicModule, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Gauge, type Registry } from 'prom-client';
import type { KarmadaApiConfig } from './config.js';
import { karmadaKubeConfig } from './dependencies.js';
import { METRICS } from './metrics.module.js';
import { stopIntervals } from './intervals.js';

/** The longest the API server gives a write (its requestTimeoutUpperBound), whatever --request-timeout says. */
export const API_SERVER_WRITE_BOUND_SECONDS = 34;

/** How often the clock is compared again: clocks drift slowly, and each comparison is one GET /version. */
export const CLOCK_CHECK_INTERVAL_MS = 60_000;

/**
 * How far one service's clock may be from the API server's: half of L - 34 s (13 s with the default
 * L of 60 s). At most 0 when L leaves no room: then any measurable difference is reported.
 */
export function clockOffsetLimitMs(landingWindowSeconds: number): number {
  return (Math.max(0, landingWindowSeconds - API_SERVER_WRITE_BOUND_SECONDS) * 1000) / 2;
}

/**
 * This process's clock minus the API server's, in ms, from one call sent at `sentAt` and answered at
 * `receivedAt` (both on this clock) with HTTP `Date: serverDate`. The header has whole seconds: the
 * server read its clock somewhere in [date, date + 1 s) while the call was in flight, so the estimate
 * (against its midpoint) is off by at most half the round trip plus 0.5 s. Undefined when the header is
 * missing or unreadable.
 */
export function clockOffsetMs(
  sentAt: number,
  receivedAt: number,
  serverDate: string | undefined,
): number | undefined {
  const server = serverDate === undefined ? Number.NaN : Date.parse(serverDate);
  if (Number.isNaN(server)) return undefined;
  return (sentAt + receivedAt) / 2 - (server + 500);
}

/** The error of clockOffsetMs for a call that took `roundTripMs`. */
const uncertaintyMs = (roundTripMs: number): number => roundTripMs / 2 + 500;

/** One comparison with the API server's clock, with where this process's two clocks stood then. */
export interface ClockMeasurement {
  offsetMs: number;
  uncertaintyMs: number;
  /** This process's wall clock (Date.now) and monotonic clock (performance.now) when it was taken. */
  wallAt: number;
  monotonicAt: number;
}

/**
 * Why claims may not be judged on this clock now, or undefined when they may: the offset last
 * measured, moved by any step of the wall clock since (against the monotonic clock, which a step of
 * the wall clock does not move), plus the measurement's error, is beyond `limitMs`. Stricter than the
 * warning (which allows for the error in the other direction): a reconciler that may be off does not
 * settle or expire claims. Not measured yet: undefined (the first check runs at start). No limit (a
 * landing window of 34 s or less, which no clocks can satisfy, as tests configure): undefined, the
 * warning alone reports it.
 */
export function clockDistrust(
  measured: ClockMeasurement | undefined,
  wallNow: number,
  monotonicNow: number,
  limitMs: number,
): string | undefined {
  if (measured === undefined || limitMs <= 0) return undefined;
  const stepped = wallNow - measured.wallAt - (monotonicNow - measured.monotonicAt);
  const offset = measured.offsetMs + stepped;
  if (Math.abs(offset) + measured.uncertaintyMs <= limitMs) return undefined;
  return (
    `this reconciler's clock may be ${(Math.abs(offset) / 1000).toFixed(1)} s ${offset > 0 ? 'ahead of' : 'behind'} ` +
    `the Karmada API server's (within ${(measured.uncertaintyMs / 1000).toFixed(1)} s), beyond the ${limitMs / 1000} s ` +
    'claims allow: it settles and expires no claim until its clock is synchronised (NTP) and measured again ' +
    '(docs/concepts/accounting.md#clocks)'
  );
}

const INTERVAL = 'clock-check';

/** Compares the clock at start and every CLOCK_CHECK_INTERVAL_MS; see the file comment. */
export class ClockCheck implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('clock');
  private readonly version: k8s.VersionApi;
  private readonly offset: Gauge;
  private measured?: ClockMeasurement;

  constructor(
    karmada: k8s.KubeConfig,
    metrics: Registry,
    private readonly scheduler: SchedulerRegistry,
    private readonly landingWindowSeconds: number,
    private readonly clock: () => number = Date.now,
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    this.version = karmada.makeApiClient(k8s.VersionApi);
    this.offset = new Gauge({
      name: 'karmada_quota_clock_offset_seconds',
      help:
        "This service's clock minus the Karmada API server's (from its Date header, within 0.5 s plus half the round trip). " +
        'Claims are judged across services: each must stay within half of ADMISSION_LANDING_WINDOW_SECONDS - 34 s',
      registers: [metrics],
    });
  }

  onModuleInit(): void {
    void this.check();
    this.scheduler.addInterval(
      INTERVAL,
      setInterval(() => void this.check(), CLOCK_CHECK_INTERVAL_MS),
    );
  }

  onModuleDestroy(): void {
    stopIntervals(this.scheduler, INTERVAL);
  }

  /**
   * One comparison: the offset in ms and whether it is beyond the limit even allowing for the
   * measurement's error (then it warns); undefined when the API server did not answer with a date.
   */
  async check(): Promise<{ offsetMs: number; beyondLimit: boolean } | undefined> {
    const sentAt = this.clock();
    let date: string | undefined;
    try {
      date = (await this.version.getCodeWithHttpInfo()).headers['date'];
    } catch (err) {
      this.logger.debug({ err }, 'clock check: the Karmada API server did not answer; trying again later');
      return undefined;
    }
    const receivedAt = this.clock();
    const monotonicAt = this.monotonic();
    const offset = clockOffsetMs(sentAt, receivedAt, date);
    if (offset === undefined) {
      this.logger.warn('clock check: the Karmada API server answered without a readable Date header');
      return undefined;
    }
    this.offset.set(offset / 1000);
    this.measured = {
      offsetMs: offset,
      uncertaintyMs: uncertaintyMs(receivedAt - sentAt),
      wallAt: receivedAt,
      monotonicAt,
    };
    const limit = clockOffsetLimitMs(this.landingWindowSeconds);
    const beyondLimit = Math.abs(offset) - uncertaintyMs(receivedAt - sentAt) > limit;
    if (beyondLimit) {
      this.logger.warn(
        `this service's clock is ${(offset / 1000).toFixed(1)} s ${offset > 0 ? 'ahead of' : 'behind'} the Karmada API ` +
          `server's; claims are judged across services, so each clock must stay within ${limit / 1000} s of it ` +
          `(half of ADMISSION_LANDING_WINDOW_SECONDS=${this.landingWindowSeconds} - 34 s): a reconciler ahead of a ` +
          'webhook can settle a claim while its change may still be stored and admit past the limit. Synchronise the ' +
          "node's clock (NTP); see docs/concepts/accounting.md#clocks",
      );
    }
    return { offsetMs: offset, beyondLimit };
  }

  /** Why claims may not be judged on this clock now (clockDistrust), or undefined. */
  distrust(): string | undefined {
    return clockDistrust(
      this.measured,
      this.clock(),
      this.monotonic(),
      clockOffsetLimitMs(this.landingWindowSeconds),
    );
  }
}

/**
 * Runs a ClockCheck against the Karmada API server in the service (METRICS must be provided, and
 * ScheduleModule imported).
 */
@Module({})
export class ClockCheckModule {
  static forRoot(options: { karmada: KarmadaApiConfig; landingWindowSeconds: number }): DynamicModule {
    return {
      module: ClockCheckModule,
      providers: [
        {
          provide: ClockCheck,
          inject: [METRICS, SchedulerRegistry],
          useFactory: (metrics: Registry, scheduler: SchedulerRegistry) =>
            new ClockCheck(
              karmadaKubeConfig(options.karmada),
              metrics,
              scheduler,
              options.landingWindowSeconds,
            ),
        },
      ],
      exports: [ClockCheck],
    };
  }
}
