import * as k8s from '@kubernetes/client-node';
import type { KarmadaQuota, ResourceBinding } from '#api';
import { addLists, Quantity, removeZeros, subtractLists, type ResourceList } from '#quantity';
import { sleep } from '../../../tools/federation/src/index.js';
import type { Tenant } from './tenant.js';

/**
 * The independent recount: what a namespace's quotas must show, recomputed from the objects in the
 * API servers alone (pods in the members, bindings on the host) with libs/quantity sums, sharing no
 * code with the aggregator, the reconciler or libs/quota. It covers what the chaos workloads use:
 * unscoped quotas over cpu / requests.cpu / memory / requests.memory / pods, bindings with
 * `spec.replicas` and `replicaRequirements`, pods labelled `app=<binding name>` (tenant.ts).
 */
export interface Recount {
  /** Usage over every member cluster: what `status.used` must be. */
  used: ResourceList;
  /** Per persisted binding: what it reserves (`max(0, charge - observed)`, no zeros); status.reserved is their sum. */
  reservations: Map<string, { uid: string; reserved: ResourceList }>;
  pods: number;
  bindings: number;
}

const ZERO = Quantity.zero();
const quantity = (value: unknown): Quantity => (value === undefined ? ZERO : Quantity.parse(String(value)));
const get = (list: ResourceList, key: string): Quantity => list[key] ?? ZERO;

/** One pod's requests as ResourceQuota counts them: containers summed, the largest init container. */
function podUsage(pod: k8s.V1Pod): ResourceList {
  const usage: ResourceList = { pods: Quantity.parse('1') };
  for (const resource of ['cpu', 'memory']) {
    let sum = ZERO;
    for (const c of pod.spec?.containers ?? []) sum = sum.add(quantity(c.resources?.requests?.[resource]));
    for (const c of pod.spec?.initContainers ?? []) {
      const init = quantity(c.resources?.requests?.[resource]);
      if (init.cmp(sum) > 0) sum = init;
    }
    sum = sum.add(quantity(pod.spec?.overhead?.[resource]));
    usage[resource] = sum;
    usage[`requests.${resource}`] = sum;
  }
  return usage;
}

/** A binding's full charge: replicas (at least the scheduled ones) times its per-replica request. */
function bindingCharge(rb: ResourceBinding): ResourceList {
  const scheduled = (rb.spec?.clusters ?? []).reduce((sum, c) => sum + (c.replicas ?? 0), 0);
  const replicas = BigInt(Math.max(rb.spec?.replicas ?? 0, scheduled));
  const charge: ResourceList = { pods: Quantity.fromInt(replicas) };
  for (const [resource, amount] of Object.entries(rb.spec?.replicaRequirements?.resourceRequest ?? {})) {
    const total = quantity(amount).mul(replicas);
    charge[resource] = total;
    charge[`requests.${resource}`] = total;
  }
  return charge;
}

/** Recounts a namespace from the API servers (see Recount). */
export async function recount(tenant: Tenant): Promise<Recount> {
  const { chaos, namespace } = tenant;
  let used: ResourceList = {};
  let pods = 0;
  const observed = new Map<string, ResourceList>();
  for (const member of chaos.members) {
    const list = await chaos.memberApi(member.name, k8s.CoreV1Api).listNamespacedPod({ namespace });
    for (const pod of list.items) {
      if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
      const usage = podUsage(pod);
      used = addLists(used, usage);
      pods++;
      const app = pod.metadata?.labels?.app;
      if (app) observed.set(app, addLists(observed.get(app) ?? {}, usage));
    }
  }
  const reservations = new Map<string, { uid: string; reserved: ResourceList }>();
  const bindings = (await tenant.bindings()).filter((rb) => !rb.metadata?.deletionTimestamp);
  for (const rb of bindings) {
    const name = rb.metadata!.name!;
    const outstanding = subtractLists(bindingCharge(rb), observed.get(name) ?? {});
    const reserved = removeZeros(
      Object.fromEntries(Object.entries(outstanding).filter(([, amount]) => amount.sign() > 0)),
    );
    reservations.set(name, { uid: rb.metadata!.uid!, reserved });
  }
  return { used, reservations, pods, bindings: bindings.length };
}

const mask = (list: ResourceList, keys: readonly string[]): ResourceList =>
  removeZeros(Object.fromEntries(keys.filter((k) => list[k] !== undefined).map((k) => [k, list[k]!])));

const parse = (raw: unknown): ResourceList =>
  Object.fromEntries(
    Object.entries((raw ?? {}) as Record<string, unknown>).map(([k, v]) => [k, quantity(v)]),
  );

const show = (list: ResourceList, keys: readonly string[]): string =>
  keys.map((k) => `${k}=${get(list, k).toCanonicalString()}`).join(',');

/** Every way the quota's status differs from the recount, as readable lines ([] when it matches). */
export function statusDifferences(quota: KarmadaQuota, expected: Recount): string[] {
  const keys = Object.keys(quota.spec?.hard ?? {}).sort();
  const name = quota.metadata?.name;
  const differences: string[] = [];
  const status = quota.status ?? {};
  const usedNow = parse(status.used);
  for (const key of keys) {
    if (!get(usedNow, key).equals(get(expected.used, key)))
      differences.push(`${name}: status.used ${show(usedNow, [key])}, recount ${show(expected.used, [key])}`);
  }
  let reservedSum: ResourceList = {};
  for (const r of expected.reservations.values()) reservedSum = addLists(reservedSum, mask(r.reserved, keys));
  // A stored binding is its own record; once everything settled, no claim is left in flight.
  for (const claim of status.reservations ?? []) {
    const binding = claim.reservedBy.name;
    const why = expected.reservations.has(binding) ? 'its binding is stored' : 'no such binding';
    differences.push(
      `${name}: a claim for ${binding} is still listed (${why}; expires ${claim.expirationTime ?? 'never'})`,
    );
  }
  const reservedNow = parse(status.reserved);
  if (keys.some((k) => !get(reservedNow, k).equals(get(reservedSum, k))))
    differences.push(
      `${name}: status.reserved ${show(reservedNow, keys)}, recount ${show(reservedSum, keys)}`,
    );
  return differences;
}

/**
 * Waits until every quota of the tenant's namespace matches a fresh recount (the services converge
 * after a fault), and fails with the remaining differences when they do not within `timeoutMs`.
 * Returns the final recount.
 */
export async function expectRecountMatches(tenant: Tenant, timeoutMs = 90_000): Promise<Recount> {
  const deadline = Date.now() + timeoutMs;
  let differences: string[];
  for (;;) {
    try {
      const expected = await recount(tenant);
      differences = (await tenant.quotas()).flatMap((q) => statusDifferences(q, expected));
      if (differences.length === 0) return expected;
    } catch (err) {
      differences = [`recount failed: ${err instanceof Error ? err.message : String(err)}`];
    }
    if (Date.now() > deadline) break;
    await sleep(500);
  }
  throw new Error(
    `the quotas of ${tenant.namespace} do not match the independent recount after ${timeoutMs / 1000}s:\n  ` +
      differences.join('\n  '),
  );
}
