/**
 * The priority class of bindings Karmada wrote without its ResourceQuotaEstimate gate (its default),
 * read from their resource templates on the Karmada API server, so that PriorityClass scopes judge
 * what the pods will run with (libs/quota scopes.ts; docs/concepts/scopes.md, "Karmada's feature
 * gate"). Only in namespaces with a quota that selects by priority class; a template is read again
 * only when its binding names a later resourceVersion than the one read.
 */
import type * as k8s from '@kubernetes/client-node';
import { describeError, type KarmadaQuota, type ResourceBinding } from '#api';
import {
  hasPriorityClassScope,
  templateClassNeeded,
  templatePriorityClass,
  withTemplateClass,
  type TemplateRef,
} from '#quota';
import type { StoreCallOptions } from './quota-store.js';
import { inReadBatches, TEMPLATE_PLURALS, TemplateReader } from './template-reader.js';

/** Cached classes; cleared when full (each entry is a few short strings). */
const CACHE_LIMIT = 20_000;

/** Thrown when a template that decides a binding's scope cannot be read; the message says what to fix. */
export class TemplateClassUnreadable extends Error {}

export class TemplateClasses {
  private readonly templates: TemplateReader<string>;

  constructor(host: k8s.KubeConfig) {
    this.templates = new TemplateReader(host, (t) => templatePriorityClass(t) ?? '', CACHE_LIMIT);
  }

  /**
   * The bindings as PriorityClass scopes must judge them: each one Karmada wrote without the gate
   * given its template's class, when one of `quotas` selects by priority class; the same array
   * otherwise. Throws TemplateClassUnreadable when a template cannot be read (a gone template reads
   * as no class: its binding is going too).
   */
  async classify<T extends ResourceBinding | undefined>(
    bindings: readonly T[],
    quotas: readonly KarmadaQuota[],
    options: StoreCallOptions = {},
  ): Promise<T[]> {
    if (!quotas.some(hasPriorityClassScope)) return [...bindings];
    const result = [...bindings];
    const needed = result.flatMap((rb, i) => {
      const ref = rb && templateClassNeeded(rb);
      return ref ? [{ i, ref }] : [];
    });
    await inReadBatches(needed, async ({ i, ref }) => {
      const priorityClassName = await this.classOf(ref, options);
      result[i] = withTemplateClass(result[i]!, priorityClassName) as T;
    });
    return result;
  }

  private async classOf(ref: TemplateRef, options: StoreCallOptions): Promise<string> {
    try {
      // A gone template reads as no class: its binding is going too.
      return (await this.templates.read(ref, options)) ?? '';
    } catch (err) {
      throw new TemplateClassUnreadable(
        `cannot read ${ref.kind} ${ref.namespace}/${ref.name}, whose pod template gives its ResourceBinding ` +
          `the priority class a PriorityClass-scoped KarmadaQuota judges (Karmada writes it into the binding ` +
          `only with its ResourceQuotaEstimate gate): ${describeError(err)}; karmada-quota needs get on ` +
          `${TEMPLATE_PLURALS[ref.kind]} in the Karmada API server`,
      );
    }
  }
}
