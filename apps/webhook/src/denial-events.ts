import { describeError } from '#api';
import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import type { Enforcement } from '#api';
import { addDenial, clusterQuotaNamed, denialEvent, type DenialTally } from '#quota';
import { stopIntervals, type QuotaEventWriter, type QuotaRef } from '#service-kit';

/** Kubernetes' own event aggregation folds repeats over minutes; denials matter sooner. */
export const DENIAL_EVENT_WINDOW_SECONDS = 10;
/** Quotas tallied per window at most: a flood across namespaces cannot grow memory without bound. */
const MAX_TALLIED_QUOTAS = 10_000;

const INTERVAL = 'denial-events';

/**
 * Records quota denials as Warning Events on the KarmadaQuota that refused them, one Event per quota
 * per window (with its count), written off the admission path so an Event write never delays or
 * fails an admission. Refusals a Warn or DryRun quota did not enforce get their own Event per window.
 */
export class DenialEventRecorder implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('denial-events');
  private tallies = new Map<string, DenialTally>();
  private dropped = 0;

  constructor(
    private readonly events: QuotaEventWriter,
    /** The quota a decision names (quotaName) in a namespace, uid from the webhook's watch: no read per Event. */
    private readonly refOf: (namespace: string, quota: string) => QuotaRef,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduler.addInterval(
      INTERVAL,
      setInterval(() => void this.flush(), DENIAL_EVENT_WINDOW_SECONDS * 1000),
    );
  }

  record(
    namespace: string,
    quota: string,
    binding: string,
    message: string,
    enforcement: Enforcement = 'Deny',
  ): void {
    const key = JSON.stringify([namespace, quota, enforcement]);
    if (!this.tallies.has(key) && this.tallies.size >= MAX_TALLIED_QUOTAS) {
      this.dropped++;
      return;
    }
    // A ClusterKarmadaQuota's Event (in default) spans namespaces: it names each binding's.
    const named = clusterQuotaNamed(quota) === undefined ? binding : `${namespace}/${binding}`;
    this.tallies.set(key, addDenial(this.tallies.get(key), named, message));
  }

  async flush(): Promise<void> {
    const tallies = this.tallies;
    this.tallies = new Map();
    if (this.dropped > 0) {
      this.logger.warn(
        { denials: this.dropped },
        `denials of more than ${MAX_TALLIED_QUOTAS} quotas in one window got no Event`,
      );
      this.dropped = 0;
    }
    await Promise.all(
      [...tallies].map(async ([key, tally]) => {
        const [namespace, quota, enforcement] = JSON.parse(key) as [string, string, Enforcement];
        try {
          // The uid lets `kubectl describe kq` list the Event; a quota deleted meanwhile has none.
          const event = denialEvent(tally, DENIAL_EVENT_WINDOW_SECONDS, enforcement);
          await this.events.write(this.refOf(namespace, quota), event);
        } catch (err) {
          this.logger.warn(
            { namespace, quota, error: describeError(err) },
            'could not record the denials as an Event on the quota',
          );
        }
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    stopIntervals(this.scheduler, INTERVAL);
    await this.flush();
  }
}
