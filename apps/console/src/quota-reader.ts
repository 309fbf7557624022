import {
  BadRequestException,
  ForbiddenException,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { KarmadaQuota } from '#api';
import {
  quotaView,
  workloadUsage,
  type QuotaView,
  type WorkloadObservations,
  type WorkloadUsage,
} from '#quota-view';
import { namespacesOf, visibleQuotas, type Caller } from './access.js';
import type { Authorizer } from './authorizer.js';
import type { BindingCache, QuotaCache } from './watched-objects.js';
import { consoleQuota, type ConsoleQuota } from './snapshot.js';
import type { Trends } from './usage-history.js';
import type { UsageRecords } from './usage-records.js';

/** Where the trends come from: the console's own samples (UsageHistory) or Prometheus (PrometheusTrends). */
export interface TrendSource {
  trends(view: QuotaView, now: Date): Trends | Promise<Trends>;
}

/** Kubernetes' name rules (DNS-1123 label, subdomain): anything else is refused before any review. */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** A quota the caller may read, with its view. */
export interface Visible {
  quota: KarmadaQuota;
  view: QuotaView;
}

/** The quotas a caller may read, as views: the one rule the JSON API and the live streams share. */
export class QuotaReader {
  constructor(
    private readonly authorizer: Authorizer,
    private readonly quotas: QuotaCache,
    private readonly bindings: BindingCache,
    private readonly trendSource: TrendSource,
    private readonly usageRecords: UsageRecords,
  ) {}

  authenticate(authorization: string | undefined): Promise<Caller> {
    return this.authorizer.authenticate(authorization);
  }

  async visible(caller: Caller): Promise<Visible[]> {
    const all = this.quotas.list();
    const access = await this.authorizer.access(caller, namespacesOf(all));
    return visibleQuotas(all, access).map((quota) => ({ quota, view: quotaView(quota) }));
  }

  /** One quota; 403 (whether or not it exists) where the caller may not get karmadaquotas. */
  async one(caller: Caller, namespace: string, name: string): Promise<Visible> {
    if (!NAMESPACE_NAME.test(namespace))
      throw new BadRequestException(`"${namespace}" is not a namespace name`);
    if (!OBJECT_NAME.test(name)) throw new BadRequestException(`"${name}" is not a KarmadaQuota name`);
    if (!(await this.authorizer.mayRead(caller, namespace))) {
      throw new ForbiddenException(`${caller.username} may not get karmadaquotas in namespace ${namespace}`);
    }
    const quota = this.quotas.get(namespace, name);
    if (!quota) throw new NotFoundException(`there is no KarmadaQuota ${name} in namespace ${namespace}`);
    return { quota, view: quotaView(quota) };
  }

  /** As served: the view, who holds the quota (its namespace's bindings) and how it filled. */
  async present({ quota, view }: Visible, now: Date): Promise<ConsoleQuota> {
    const [{ trends, source }, usage] = await Promise.all([
      this.trendSource.trends(view, now),
      this.usageRecords.observations(view.namespace, now),
    ]);
    return consoleQuota(view, now, {
      workloads: this.workloads(quota, view.namespace, usage),
      trends,
      trendSource: source,
    });
  }

  /** Without the bindings, every use would look like "not from a binding": say why there are no rows instead. */
  private workloads(quota: KarmadaQuota, namespace: string, usage: WorkloadObservations): WorkloadUsage {
    let bindings;
    try {
      bindings = this.bindings.list(namespace);
    } catch (err) {
      if (!(err instanceof ServiceUnavailableException)) throw err;
      return {
        rows: [],
        problems: [
          `${err.message} (the console needs list and watch on resourcebindings.work.karmada.io; its log says why it has none)`,
        ],
      };
    }
    return workloadUsage(quota, bindings, usage);
  }
}
