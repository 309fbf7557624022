import * as k8s from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { RESOURCE_BINDING, type ResourceBinding } from '#api';
import { sleep, type RunningService } from '../../tools/federation/src/index.js';
import { admissionResponse, bindingReview, postToWebhook } from './support/admission.js';
import { ChaosFederation } from './support/chaos-federation.js';
import { expectRecountMatches } from './support/recount.js';
import { StatusRecorder } from './support/recorder.js';
import { retrying, Tenant } from './support/tenant.js';

/**
 * Fault 6: the API server sends the same AdmissionReview many times (its retries, several API
 * server replicas), and several clients update the same binding at once, most of their updates
 * losing on resourceVersion after the webhook admitted them.
 */
let chaos: ChaosFederation;
let webhook: RunningService;

beforeAll(async () => {
  chaos = await ChaosFederation.start('retries', { members: 1 });
  await chaos.startServices(['aggregator', 'reconciler']);
  webhook = await chaos.startService('webhook');
}, 300_000);

afterAll(async () => {
  await chaos?.stop();
});

const objects = () => chaos.hostApi(k8s.CustomObjectsApi);

const readBinding = (tenant: Tenant, name: string) =>
  objects().getNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace: tenant.namespace,
    name,
  }) as Promise<ResourceBinding>;

const withReplicas = (rb: ResourceBinding, replicas: number): ResourceBinding => ({
  ...rb,
  spec: { ...rb.spec!, replicas, clusters: [{ name: 'member1', replicas }] },
});

/**
 * Runs a check on a tenant of its own (quota `team` with `hard`), recording every status its quota
 * goes through: none may have `used + reserved` above `hard`.
 */
async function onTenant(
  label: string,
  hard: Record<string, string>,
  check: (tenant: Tenant) => Promise<void>,
): Promise<void> {
  const tenant = await Tenant.create(chaos, label, { team: hard });
  const recorder = new StatusRecorder(tenant);
  await recorder.start();
  try {
    await check(tenant);
    expect(recorder.violations()).toEqual([]);
  } finally {
    recorder.stop();
  }
}

const review = (body: object) => postToWebhook(webhook, '/validate/resourcebindings', JSON.stringify(body));

test(
  'the same AdmissionReview sent 60 times charges once',
  () =>
    onTenant('retried-review', { cpu: '10', pods: '50' }, async (tenant) => {
      await tenant.createBinding('web', { replicas: 1, cpu: '1', cluster: 'member1' });
      const current = await readBinding(tenant, 'web');
      // A scale-up from 1 to 3 replicas, delivered 30 times at once and 30 times one after another.
      const update = bindingReview('UPDATE', withReplicas(current, 3), { oldObject: current });
      const replies = [
        ...(await Promise.all(Array.from({ length: 30 }, () => review(update)))),
        ...(await (async () => {
          const sequential = [];
          for (let i = 0; i < 30; i++) sequential.push(await review(update));
          return sequential;
        })()),
      ];
      expect(replies.map((r) => admissionResponse(r)?.allowed)).toEqual(replies.map(() => true));
      const held = (await tenant.quota('team')).status!;
      expect(held.reservations?.map((r) => [r.reservedBy.name, r.charge?.cpu])).toEqual([['web', '3']]);
      expect(held.reserved?.cpu).toBe('3');

      // The same CREATE of a binding that never persists, 30 times: one reservation, which expires.
      const ghost = tenant.binding('ghost', { replicas: 2, cpu: '1', cluster: 'member1' });
      ghost.metadata!.uid = randomUUID();
      const create = bindingReview('CREATE', ghost);
      const ghostReplies = await Promise.all(Array.from({ length: 30 }, () => review(create)));
      expect(ghostReplies.every((r) => admissionResponse(r)?.allowed === true)).toBe(true);
      const withGhost = (await tenant.quota('team')).status!;
      expect(withGhost.reservations?.filter((r) => r.reservedBy.name === 'ghost')).toHaveLength(1);
      expect(withGhost.reserved?.cpu).toBe('5');

      // The update the API server was retrying lands; Karmada propagates it.
      await retrying('update web', () =>
        objects().replaceNamespacedCustomObject({
          ...RESOURCE_BINDING,
          namespace: tenant.namespace,
          name: 'web',
          body: withReplicas(current, 3),
        }),
      );
      await tenant.propagateAll();
      await expectRecountMatches(tenant);
    }),
  300_000,
);

test(
  "a create retried after its answer was lost keeps the persisted binding's reservation",
  () =>
    onTenant('retried-create', { cpu: '10', pods: '50' }, async (tenant) => {
      const shape = { replicas: 2, cpu: '1', cluster: 'member1' };
      expect(await tenant.createBinding('web', shape)).toBe('admitted');
      await expectRecountMatches(tenant);
      // Karmada lost the answer and creates it again: the API server has the webhook admit the new
      // object (a fresh uid) before its storage answers 409 AlreadyExists.
      await expect(
        objects().createNamespacedCustomObject({
          ...RESOURCE_BINDING,
          namespace: tenant.namespace,
          body: tenant.binding('web', shape),
        }),
      ).rejects.toMatchObject({ code: 409 });
      // Past the duplicate's reservation TTL (5 s), the persisted binding must still hold its charge.
      await sleep(7_000);
      await expectRecountMatches(tenant);
      await tenant.propagateAll();
      await expectRecountMatches(tenant);
    }),
  300_000,
);

test(
  'one binding updated by 6 clients at once while others compete for the quota',
  () =>
    onTenant('concurrent-updates', { cpu: '6', pods: '50' }, async (tenant) => {
      await tenant.createBinding('shared', { replicas: 2, cpu: '500m', cluster: 'member1' });
      let seed = 42;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const results = { updated: 0, conflicts: 0, denied: 0 };
      // Each client reads the binding and sets a new replica count (1..8 x 500m); most lose the race.
      const updater = async () => {
        for (let i = 0; i < 10; i++) {
          const current = await readBinding(tenant, 'shared');
          try {
            await objects().replaceNamespacedCustomObject({
              ...RESOURCE_BINDING,
              namespace: tenant.namespace,
              name: 'shared',
              body: withReplicas(current, 1 + random(8)),
            });
            results.updated++;
          } catch (err) {
            const code = err instanceof k8s.ApiException ? err.code : 0;
            if (code === 409) results.conflicts++;
            else if (code === 403) results.denied++;
            else throw err;
          }
        }
      };
      // Meanwhile other bindings take whatever the shared one gives back.
      let others = 0;
      const competitor = async (c: number) => {
        for (let i = 0; i < 6; i++) {
          const outcome = await tenant.createBinding(`other-${c}-${i}`, {
            replicas: 1,
            cpu: '500m',
            cluster: 'member1',
          });
          if (outcome === 'admitted') others++;
          await sleep(50);
        }
      };
      await Promise.all([
        ...Array.from({ length: 6 }, () => updater()),
        ...Array.from({ length: 2 }, (_, c) => competitor(c)),
      ]);
      process.stderr.write(
        `[retries] shared binding: ${JSON.stringify(results)}; ${others} other bindings admitted\n`,
      );
      expect(results.conflicts).toBeGreaterThan(0);
      expect(results.updated).toBeGreaterThan(0);

      // Every admitted change that lost its race expires; what is left is what persisted.
      await expectRecountMatches(tenant, 120_000);
      await tenant.propagateAll();
      await expectRecountMatches(tenant, 120_000);
    }),
  300_000,
);
