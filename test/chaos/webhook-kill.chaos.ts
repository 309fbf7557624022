import { randomUUID } from 'node:crypto';
import { sleep } from '../../tools/federation/src/index.js';
import { eventually } from '../support/federation.js';
import { admissionResponse, bindingReview, postToWebhook, type WebhookTarget } from './support/admission.js';
import { ChaosScenario } from './support/scenario.js';
import { expectRecountMatches } from './support/recount.js';
import type { CreateOutcome } from './support/tenant.js';

/**
 * Fault 3: the webhook is killed (SIGKILL) in the middle of a batch and started again. Batches
 * that wrote their reservations but never answered leave reservations for creates that never
 * persisted: those must expire (RESERVATION_TTL_SECONDS=5 here); every binding that did persist
 * must hold its full reservation.
 */
const scenario = ChaosScenario.setUp('webhook-kill', {
  members: 1,
  quotas: { team: { cpu: '20', pods: '100' } },
});

/**
 * Admissions the API server asked for and never stored: direct AdmissionReviews for bindings that
 * are never created (as when the API server's create fails after admission).
 */
async function ghosts(webhook: WebhookTarget, from: number, count: number): Promise<number> {
  const replies = await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const rb = scenario.tenant.binding(`ghost-${from + i}`, {
        replicas: 1,
        cpu: '100m',
        cluster: 'member1',
      });
      rb.metadata!.uid = randomUUID();
      return postToWebhook(
        webhook,
        '/validate/resourcebindings',
        JSON.stringify(bindingReview('CREATE', rb)),
      );
    }),
  );
  return replies.filter((r) => admissionResponse(r)?.allowed === true).length;
}

test('a webhook killed mid-batch: no admitted binding without its reservation, leaked ones expire', async () => {
  expect(await ghosts(scenario.service('webhook'), 0, 5)).toBe(5);

  // 60 creates of 500m (30 CPU asked, 19.5 free) from 20 clients, and more ghosts, at once.
  const outcomes: CreateOutcome[] = [];
  const client = async (c: number) => {
    for (let i = 0; i < 3; i++) {
      outcomes.push(
        await scenario.tenant.createBinding(`burst-${c}-${i}`, {
          replicas: 1,
          cpu: '500m',
          cluster: 'member1',
        }),
      );
    }
  };
  const burst = Promise.all(Array.from({ length: 20 }, (_, c) => client(c)));
  const moreGhosts = ghosts(scenario.service('webhook'), 5, 20);

  await eventually(
    async () =>
      scenario.recorder.samples.some((s) => s.reservations.some((name) => name.startsWith('burst-'))),
    (seen) => seen,
    60_000,
  );
  const before = scenario.service('webhook').process.pid;
  await scenario.service('webhook').process.kill();
  const downAt = Date.now();
  await sleep(1_000);
  await scenario.restart('webhook');
  expect(scenario.service('webhook').process.pid).not.toBe(before);
  await Promise.all([burst, moreGhosts]);
  process.stderr.write(
    `[webhook-kill] webhook down ${Date.now() - downAt} ms (until the burst ended); ` +
      `${outcomes.filter((o) => o === 'admitted').length} of ${outcomes.length} admitted\n`,
  );
  expect(outcomes.some((o) => o === 'denied')).toBe(true);

  // Before any pod exists: each persisted binding holds its full charge, and the ghosts' (and the
  // killed batches') reservations are gone.
  const reserved = await expectRecountMatches(scenario.tenant, 120_000);
  expect(reserved.bindings).toBeGreaterThanOrEqual(outcomes.filter((o) => o === 'admitted').length);
  expect(scenario.recorder.samples.some((s) => s.reservations.some((n) => n.startsWith('ghost-')))).toBe(
    true,
  );

  await scenario.tenant.propagateAll();
  await expectRecountMatches(scenario.tenant, 120_000);
  expect(scenario.recorder.violations()).toEqual([]);
}, 600_000);
