/**
 * The priority class of bindings Karmada wrote without its ResourceQuotaEstimate gate (its default),
 * read from their resource templates on the Karmada API server, so that PriorityClass scopes judge
 * what the pods will run with (libs/quota scopes.ts; docs/concepts/scopes.md, "Karmada's feature
 * gate"). Only in namespaces with a quota that selects by priority class; a template is read again
 * only when its binding names a later resourceVersion than the one read. A binding naming an older
 * version than the one read (the old object of the UPDATE that follows a change of the template's
 * class) gets that version's class, remembered in Redis by whichever service read it
 * (template-class-memo.ts).
 */
import type * as k8s from '@kubernetes/client-node';
import { describeError, type KarmadaQuota, type ResourceBinding } from '#api';
import {
  classForVersion,
  hasPriorityClassScope,
  namesOlderVersion,
  templateClassNeeded,
  templatePriorityClass,
  withTemplateClass,
  type TemplateRef,
} from '#quota';
import type { StoreCallOptions } from './quota-store.js';
import type { RedisClient } from './redis.module.js';
import { TemplateClassMemo } from './template-class-memo.js';
import { inReadBatches, TEMPLATE_PLURALS, TemplateReader } from './template-reader.js';

/** Cached classes; cleared when full (each entry is a few short strings). */
const CACHE_LIMIT = 20_000;

/** Thrown when a template that decides a binding's scope cannot be read; the message says what to fix. */
export class TemplateClassUnreadable extends Error {}

export class TemplateClasses {
  private readonly templates: TemplateReader<string>;
  private readonly memo: TemplateClassMemo;

  constructor(karmada: k8s.KubeConfig, redis: RedisClient) {
    this.templates = new TemplateReader(karmada, (t) => templatePriorityClass(t) ?? '', CACHE_LIMIT);
    this.memo = new TemplateClassMemo(redis);
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
    const read = await this.read(ref, options);
    // A gone template reads as no class: its binding is going too.
    if (read === undefined) return '';
    const current = { resourceVersion: read.resourceVersion, priorityClassName: read.value };
    // Off the admission's path: the memo is for the bindings that will name this version as old.
    if (read.fresh && read.resourceVersion !== undefined)
      void this.memo.record(ref, read.resourceVersion, read.value);
    if (!namesOlderVersion(ref.resourceVersion, current)) return read.value;
    return classForVersion(await this.memo.read(ref, options.deadline), ref.resourceVersion, current);
  }

  private async read(ref: TemplateRef, options: StoreCallOptions) {
    try {
      return await this.templates.readVersion(ref, options);
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
