import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { stopIntervals } from '#service-kit';
import { describeError } from '#api';
import { quotaView, sparkline, type QuotaView, type TrendSample } from '#quota-view';
import type { QuotaCache } from './watched-objects.js';
import type { ResourceTrend } from './snapshot.js';

/** How far back the page's trends go. */
export const TREND_WINDOW_MS = 24 * 3600 * 1000;
/** The sparkline's drawing box (its viewBox; the page scales it). */
export const TREND_SIZE = { width: 120, height: 24 };

/**
 * Used percent of every quota resource at each sampling round, kept for TREND_WINDOW_MS in a ring:
 * one time per round, one Float32Array per quota resource (4 bytes a sample, about 1.2 KB a day
 * at the default 5 minutes). A series absent from TREND_WINDOW_MS of rounds (its quota or resource
 * gone) is dropped. Time is passed in, so the rule is testable as is.
 */
export class SampleRing {
  private readonly times: Float64Array;
  private readonly series = new Map<string, Float32Array>();
  private next = 0;

  constructor(readonly capacity: number) {
    this.times = new Float64Array(capacity).fill(Number.NaN);
  }

  /** One round at `at`: each reading is [series key, percent]; a series not read has a gap there. */
  record(at: number, readings: Iterable<readonly [string, number]>): void {
    const slot = this.next;
    this.next = (slot + 1) % this.capacity;
    this.times[slot] = at;
    for (const values of this.series.values()) values[slot] = Number.NaN;
    for (const [key, percent] of readings) {
      let values = this.series.get(key);
      if (values === undefined) {
        values = new Float32Array(this.capacity).fill(Number.NaN);
        this.series.set(key, values);
      }
      values[slot] = percent;
    }
    for (const [key, values] of this.series) if (values.every(Number.isNaN)) this.series.delete(key);
  }

  /** The series' samples, oldest first. */
  samples(key: string): TrendSample[] {
    const values = this.series.get(key);
    if (values === undefined) return [];
    const samples: TrendSample[] = [];
    for (let i = 0; i < this.capacity; i++) {
      const slot = (this.next + i) % this.capacity;
      const percent = values[slot]!;
      if (!Number.isNaN(percent))
        samples.push({ at: this.times[slot]!, percent: Math.round(percent * 10) / 10 });
    }
    return samples;
  }

  get size(): number {
    return this.series.size;
  }
}

const INTERVAL = 'trend-sample';

const seriesKey = (view: Pick<QuotaView, 'namespace' | 'name'>, resource: string) =>
  `${view.namespace}/${view.name}/${resource}`;

/**
 * Whether each quota is filling: every `sampleSeconds` the console reads status.used of every quota
 * (from its watch: no request to the Karmada API server) as a percent of hard, for the last 24
 * hours. Kept in memory: a restarted console starts a new history, and each replica keeps its own.
 */
export class UsageHistory implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('trends');
  private readonly ring: SampleRing;

  constructor(
    private readonly quotas: QuotaCache,
    readonly sampleSeconds: number,
    private readonly scheduler: SchedulerRegistry,
  ) {
    this.ring = new SampleRing(Math.ceil(TREND_WINDOW_MS / (sampleSeconds * 1000)) + 1);
  }

  onApplicationBootstrap(): void {
    this.scheduler.addInterval(
      INTERVAL,
      setInterval(() => this.sample(Date.now()), this.sampleSeconds * 1000),
    );
  }

  onModuleDestroy(): void {
    stopIntervals(this.scheduler, INTERVAL);
  }

  sample(at: number): void {
    let quotas;
    try {
      quotas = this.quotas.list();
    } catch (err) {
      return void this.logger.debug({ error: describeError(err) }, 'no trend sample'); // not synced yet
    }
    const readings: [string, number][] = [];
    for (const quota of quotas) {
      const view = quotaView(quota);
      for (const row of view.resources) readings.push([seriesKey(view, row.resource), row.usedPercent]);
    }
    this.ring.record(at, readings);
  }

  /** How each resource of `view` filled, from this console's samples. */
  trends(view: QuotaView, now: Date): Trends {
    return {
      source: `sampled by this console every ${this.sampleSeconds} s since it started`,
      trends: resourceTrends(view, (resource) => this.ring.samples(seriesKey(view, resource)), now),
    };
  }
}

/** Trends of a quota's resources, and where they come from (shown on the page). */
export interface Trends {
  source: string;
  trends: ResourceTrend[];
}

/**
 * Per resource of `view`, its samples (oldest first) ending with the view's own reading at `now`,
 * drawn over the last 24 hours or, with a shorter history, over that (the page says how long).
 */
export function resourceTrends(
  view: QuotaView,
  samplesOf: (resource: string) => readonly TrendSample[],
  now: Date,
): ResourceTrend[] {
  const to = now.getTime();
  return view.resources.map((row) => {
    const samples = samplesOf(row.resource).filter((s) => s.at >= to - TREND_WINDOW_MS && s.at < to);
    const from = samples[0]?.at ?? to;
    return {
      resource: row.resource,
      ...sparkline([...samples, { at: to, percent: row.usedPercent }], { from, to }, TREND_SIZE),
    };
  });
}
