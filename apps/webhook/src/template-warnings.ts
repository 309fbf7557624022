/**
 * Warnings for the user who applies a workload (kubectl prints them), from the quotas selecting its
 * namespace whose enforcement is Warn: the binding Karmada will write for it (libs/usage
 * bindingForTemplate) is decided as a dry run against those quotas, exactly as its write will be, and
 * each refusal becomes a warning. Nothing is claimed or recorded here: the binding's own admission
 * does that. Never refuses (docs/concepts/enforcement.md#at-apply).
 */
import { parseEnforcement, enforcementWarning, bindingCharge } from '#quota';
import { bindingForTemplate, updatedForTemplate } from '#usage';
import { isJsonObject } from '#api';
import type { StoreCallOptions } from '#service-kit';
import { asksNothing, bindingChange, decide, projected, selectionOf, type CasOptions } from '#accounting';
import type { StoredBindings } from './stored-bindings.js';
import type { WatchedQuotaStore } from './watched-quota-store.js';

export class TemplateWarnings {
  constructor(
    private readonly quotas: Pick<WatchedQuotaStore, 'watchedIn' | 'selectedNamespaces'>,
    private readonly stored: Pick<StoredBindings, 'read'>,
    private readonly timing: Pick<CasOptions, 'ttlSeconds' | 'landingWindowSeconds'>,
  ) {}

  /** The warnings for a CREATE or UPDATE of `template` in `namespace`; [] when none applies. */
  async warnings(namespace: string, template: unknown, options: StoreCallOptions): Promise<string[]> {
    // The quotas as the watch last saw them: a workload write in a namespace without a Warn quota
    // costs no call to the API server.
    const warnQuotas = (this.quotas.watchedIn(namespace) ?? []).filter(
      (q) => parseEnforcement(q.spec?.enforcement) === 'Warn',
    );
    if (warnQuotas.length === 0 || !isJsonObject(template)) return [];
    const fromTemplate = bindingForTemplate(template);
    if (!fromTemplate) return [];
    const name = fromTemplate.metadata!.name!;
    const stored = await this.stored.read(namespace, name, 'to warn of a Warn quota at apply', options);
    const binding = stored ? updatedForTemplate(stored, fromTemplate) : fromTemplate;
    const { charge, errors } = bindingCharge(binding);
    const change = bindingChange({ namespace, name }, binding, charge, true, stored);
    const projection = projected(warnQuotas, namespace, selectionOf(this.quotas));
    if (errors.length > 0 || asksNothing(change) || !projection) return [];
    const [decision] = decide(projection, [change], Date.now(), this.timing).decisions;
    if (!decision?.allowed) return [];
    const subject = `the ResourceBinding ${name} of this workload`;
    return (decision.notEnforced ?? [])
      .filter((n) => n.enforcement === 'Warn')
      .map((n) => enforcementWarning(n.quota, n.message, subject));
  }
}
