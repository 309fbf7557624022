import { BadRequestException, ForbiddenException, NotFoundException } from '@nestjs/common';
import { quotaView, type QuotaView } from '#quota-view';
import { namespacesOf, visibleQuotas, type Caller } from './access.js';
import type { Authorizer } from './authorizer.js';
import type { QuotaCache } from './quota-cache.js';

/** Kubernetes' name rules (DNS-1123 label, subdomain): anything else is refused before any review. */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The quotas a caller may read, as views: the one rule the JSON API and the live streams share. */
export class QuotaReader {
  constructor(
    private readonly authorizer: Authorizer,
    private readonly quotas: QuotaCache,
  ) {}

  authenticate(authorization: string | undefined): Promise<Caller> {
    return this.authorizer.authenticate(authorization);
  }

  async visible(caller: Caller): Promise<QuotaView[]> {
    const all = this.quotas.list();
    const access = await this.authorizer.access(caller, namespacesOf(all));
    return visibleQuotas(all, access).map(quotaView);
  }

  /** One quota; 403 (whether or not it exists) where the caller may not get karmadaquotas. */
  async one(caller: Caller, namespace: string, name: string): Promise<QuotaView> {
    if (!NAMESPACE_NAME.test(namespace))
      throw new BadRequestException(`"${namespace}" is not a namespace name`);
    if (!OBJECT_NAME.test(name)) throw new BadRequestException(`"${name}" is not a KarmadaQuota name`);
    if (!(await this.authorizer.mayRead(caller, namespace))) {
      throw new ForbiddenException(`${caller.username} may not get karmadaquotas in namespace ${namespace}`);
    }
    const quota = this.quotas.get(namespace, name);
    if (!quota) throw new NotFoundException(`there is no KarmadaQuota ${name} in namespace ${namespace}`);
    return quotaView(quota);
  }
}
