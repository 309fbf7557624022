import * as k8s from '@kubernetes/client-node';
import { RESOURCE_BINDING, type ResourceBinding } from '#api';
import { sleep } from '../../tools/federation/src/index.js';
import { eventually } from '../support/federation.js';
import { get, metricValue } from './support/metrics.js';
import { expectRecountMatches } from './support/recount.js';
import { ChaosScenario } from './support/scenario.js';
import { isRetryable, type CreateOutcome } from './support/tenant.js';

/**
 * ADMISSION_MODE=owner (experimental, docs/concepts/admission-owner.md) on a real host API server: one
 * webhook process holds the admission Lease and decides from memory, writing nothing to quota
 * statuses; killed mid-load, its restarted successor takes the Lease once it expired and refuses
 * increases until the counts hold what the dead one admitted, never decreases.
 */
const LEASE_SECONDS = 4;
const LANDING_WINDOW_SECONDS = 2;
const scenario = ChaosScenario.setUp('admission-owner', {
  members: 1,
  quotas: { team: { cpu: '10', pods: '100' } },
  env: {
    webhook: {
      ADMISSION_MODE: 'owner',
      ADMISSION_LEASE_DURATION_SECONDS: String(LEASE_SECONDS),
      ADMISSION_LEASE_RENEW_DEADLINE_SECONDS: '3',
      ADMISSION_LEASE_RETRY_SECONDS: '1',
    },
  },
});

const webhookMetric = async (name: string): Promise<number | undefined> =>
  metricValue((await get(`${scenario.service('webhook').url}/metrics`)).body, name);

const objects = () => scenario.chaos.hostApi(k8s.CustomObjectsApi);

/** One create through the host API server: its outcome, or 'unavailable' (the webhook failed closed). */
async function createOnce(name: string, cpu = '1'): Promise<CreateOutcome | 'unavailable'> {
  try {
    await objects().createNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace: scenario.tenant.namespace,
      body: scenario.tenant.binding(name, { replicas: 1, cpu, cluster: 'member1' }),
    });
    return 'admitted';
  } catch (err) {
    if (err instanceof k8s.ApiException && err.code === 403) return 'denied';
    if (isRetryable(err)) return 'unavailable';
    throw err;
  }
}

async function deleteBinding(name: string): Promise<void> {
  await objects().deleteNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace: scenario.tenant.namespace,
    name,
  });
}

/** The cpu the stored bindings ask for, in millicores. */
const storedMilliCpu = async (): Promise<number> =>
  (await scenario.tenant.bindings()).reduce((sum, rb) => {
    const cpu = String(rb.spec?.replicaRequirements?.resourceRequest?.cpu ?? '0');
    const milli = cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000;
    return sum + (rb.spec?.replicas ?? 0) * milli;
  }, 0);

test('one owner decides from memory: never over the limit, no claim in any status, claims leave as counts come', async () => {
  await eventually(
    () => webhookMetric('karmada_quota_admission_owner'),
    (owner) => owner === 1,
    30_000,
  );
  const outcomes = await Promise.all(Array.from({ length: 15 }, (_, i) => createOnce(`first-${i}`)));
  expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(10);
  expect(outcomes.filter((o) => o === 'denied')).toHaveLength(5);
  expect(await storedMilliCpu()).toBe(10_000);
  // The reconciler's counts hold all ten: no claim is left in the owner's memory.
  await eventually(
    () => webhookMetric('karmada_quota_admission_owner_claims'),
    (claims) => claims === 0,
    30_000,
  );
  expect(await createOnce('one-too-many')).toBe('denied');
  // Nothing was written to a status by admission: no version of the quota ever listed a claim.
  expect(scenario.recorder.of('team').every((sample) => sample.reservations.length === 0)).toBe(true);
  expect(scenario.recorder.of('team').some((sample) => sample.reserved.cpu === '10')).toBe(true);
  expect(scenario.recorder.violations()).toEqual([]);

  // Freed quota is decided on once counted.
  const admitted = outcomes.flatMap((o, i) => (o === 'admitted' ? [`first-${i}`] : []));
  for (const name of admitted.slice(0, 3)) await deleteBinding(name);
  await eventually(
    async () => (await scenario.tenant.quota('team')).status?.reserved?.cpu,
    (cpu) => cpu === '7',
    30_000,
  );
  const again = await Promise.all(Array.from({ length: 4 }, (_, i) => createOnce(`again-${i}`)));
  expect(again.filter((o) => o === 'admitted')).toHaveLength(3);
  expect(await storedMilliCpu()).toBe(10_000);
});

test('the owner killed mid-load: increases refused for about a Lease duration and a landing window, decreases never, nothing over the limit', async () => {
  const namespace = scenario.tenant.namespace;
  // Room for 4 more cpu: bindings of 100m from 8 clients, well past it, while the owner dies.
  for (const rb of await scenario.tenant.bindings())
    if (rb.metadata!.name!.startsWith('again-')) await deleteBinding(rb.metadata!.name!);
  await eventually(
    async () => (await scenario.tenant.quota('team')).status?.reserved?.cpu,
    (cpu) => cpu === '7',
    30_000,
  );
  const unavailableAt: number[] = [];
  let stop = false;
  const client = async (c: number) => {
    for (let i = 0; !stop; i++) {
      const outcome = await createOnce(`load-${c}-${i}`, '100m');
      if (outcome === 'unavailable') unavailableAt.push(Date.now());
      await sleep(50);
    }
  };
  const load = Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
  await sleep(1_000);
  await scenario.service('webhook').process.kill();
  await scenario.restart('webhook');
  const restartedAt = Date.now();
  // Not the owner yet, or refusing increases since it took over: a scale-down is admitted at once.
  const shrinking = (await scenario.tenant.bindings()).find((rb) => rb.metadata!.name!.startsWith('first-'))!;
  const smaller: ResourceBinding = { ...shrinking, spec: { ...shrinking.spec!, replicas: 0, clusters: [] } };
  await objects().replaceNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace,
    name: shrinking.metadata!.name!,
    body: smaller,
  });
  await eventually(
    () => webhookMetric('karmada_quota_admission_owner'),
    (owner) => owner === 1,
    30_000,
  );
  // Admitting again once the counts hold what the dead owner admitted.
  const admittedAgain = await eventually(
    async () =>
      (await createOnce(`after-${Date.now()}`, '100m')) === 'unavailable' ? undefined : Date.now(),
    (at) => at !== undefined,
    60_000,
  );
  stop = true;
  await load;
  const refusedFor = admittedAgain! - restartedAt;
  process.stderr.write(`[admission-owner] increases refused for ${refusedFor} ms after the restart\n`);
  expect(refusedFor).toBeLessThan((LEASE_SECONDS + LANDING_WINDOW_SECONDS) * 1000 + 15_000);
  expect(unavailableAt.length).toBeGreaterThan(0);
  expect(await storedMilliCpu()).toBeLessThanOrEqual(10_000);
  await expectRecountMatches(scenario.tenant);
  expect(scenario.recorder.violations()).toEqual([]);
});
