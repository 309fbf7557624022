import * as k8s from '@kubernetes/client-node';
import { RESOURCE_BINDING, type ResourceBinding } from '#api';
import { ADMISSION_LEASE_NAME } from '#service-kit';
import { SYSTEM_NAMESPACE, sleep } from '../../tools/federation/src/index.js';
import { eventually } from '../support/federation.js';
import { get, metricValue } from './support/metrics.js';
import { expectRecountMatches } from './support/recount.js';
import { ChaosScenario } from './support/scenario.js';
import { isRetryable } from './support/tenant.js';

/**
 * ADMISSION_MODE=owner (experimental, docs/concepts/admission-owner.md) with two webhook replicas
 * behind one registration, on a real host API server: the holder of the admission Lease decides from
 * memory, writing nothing to quota statuses, and the other replica forwards to it. The owner killed
 * mid-load: the other takes the Lease once it expired and admits again at once, charging the dead
 * one's in-flight budgets until the counts hold what it admitted; decreases are never refused. The
 * owner paused past its Lease: it decides nothing once it resumes. A rolling switch of mode each way
 * under load, room freed all along: the fence keeps the modes from deciding together.
 */
const LEASE_SECONDS = 4;
/** Longer than the Lease: a successor that waited a window before admitting again would show. */
const LANDING_WINDOW_SECONDS = 10;
/** Shared by the webhook and the reconciler, as the chart sets them. */
const CLAIM_TIMING = {
  ADMISSION_LANDING_WINDOW_SECONDS: String(LANDING_WINDOW_SECONDS),
  RESERVATION_TTL_SECONDS: String(2 * LANDING_WINDOW_SECONDS),
};
const scenario = ChaosScenario.setUp('admission-owner', {
  members: 1,
  quotas: { team: { cpu: '10', pods: '100' } },
  webhookReplicas: 2,
  env: {
    webhook: {
      ADMISSION_MODE: 'owner',
      ADMISSION_LEASE_DURATION_SECONDS: String(LEASE_SECONDS),
      ADMISSION_LEASE_RENEW_DEADLINE_SECONDS: '3',
      ADMISSION_LEASE_RETRY_SECONDS: '1',
      ...CLAIM_TIMING,
    },
    reconciler: CLAIM_TIMING,
  },
});

const metrics = async (replica: number): Promise<string> =>
  (await get(`${scenario.webhooks[replica]!.url}/metrics`, 2_000)).body;

/** Which replica holds the admission Lease now (undefined: none says so). */
async function owner(): Promise<number | undefined> {
  for (const replica of [0, 1]) {
    const text = await metrics(replica).catch(() => '');
    if (metricValue(text, 'karmada_quota_admission_owner') === 1) return replica;
  }
  return undefined;
}

const forwarded = async (replica: number, result: string): Promise<number> => {
  const line = (await metrics(replica))
    .split('\n')
    .find(
      (l) => l.startsWith('karmada_quota_admission_forwarded_total{') && l.includes(`result="${result}"`),
    );
  return line ? Number(line.split(' ').at(-1)) : 0;
};

const objects = () => scenario.chaos.hostApi(k8s.CustomObjectsApi);

/**
 * Reads the admission Lease every 50 ms from now until its holder changes: how long after its holder's
 * last renew (its renewTime) the next holder took it (its acquireTime). Both are this machine's clock.
 */
async function takeoverGapMs(): Promise<number> {
  const api = scenario.chaos.hostApi(k8s.CoordinationV1Api);
  const read = () => api.readNamespacedLease({ name: ADMISSION_LEASE_NAME, namespace: SYSTEM_NAMESPACE });
  const holder = (await read()).spec!.holderIdentity;
  let lastRenew = 0;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
    const lease = await read();
    if (lease.spec!.holderIdentity === holder) lastRenew = new Date(lease.spec!.renewTime!).getTime();
    else if (lease.spec!.holderIdentity) return new Date(lease.spec!.acquireTime!).getTime() - lastRenew;
  }
  throw new Error(`the admission Lease was still held by ${holder} after 60 s`);
}

/**
 * 'unavailable': our webhook failed closed; 'unreached': the API server could not call a webhook
 * (its process killed or stopped: the connection, not our answer).
 */
type Outcome = 'admitted' | 'denied' | 'unavailable' | 'unreached';

function outcomeOf(err: unknown): Outcome {
  if (err instanceof k8s.ApiException && err.code === 403) return 'denied';
  if (!isRetryable(err)) throw err;
  return String((err as { body?: unknown }).body ?? err).includes('could not check the quota')
    ? 'unavailable'
    : 'unreached';
}

async function createOnce(name: string, cpu = '1'): Promise<Outcome> {
  try {
    await objects().createNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace: scenario.tenant.namespace,
      body: scenario.tenant.binding(name, { replicas: 1, cpu, cluster: 'member1' }),
    });
    return 'admitted';
  } catch (err) {
    return outcomeOf(err);
  }
}

/** Scales the binding to no replicas: a decrease, answered without the owner. */
async function scaleDownOnce(name: string): Promise<Outcome> {
  try {
    const stored = (await objects().getNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace: scenario.tenant.namespace,
      name,
    })) as ResourceBinding;
    await objects().replaceNamespacedCustomObject({
      ...RESOURCE_BINDING,
      namespace: scenario.tenant.namespace,
      name,
      body: { ...stored, spec: { ...stored.spec!, replicas: 0, clusters: [] } },
    });
    return 'admitted';
  } catch (err) {
    return outcomeOf(err);
  }
}

async function deleteBinding(name: string): Promise<void> {
  await objects().deleteNamespacedCustomObject({
    ...RESOURCE_BINDING,
    namespace: scenario.tenant.namespace,
    name,
  });
}

const milli = (cpu: string): number => (cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000);

/** The cpu the stored bindings ask for, in millicores. */
const storedMilliCpu = async (): Promise<number> =>
  (await scenario.tenant.bindings()).reduce(
    (sum, rb) =>
      sum +
      (rb.spec?.replicas ?? 0) * milli(String(rb.spec?.replicaRequirements?.resourceRequest?.cpu ?? '0')),
    0,
  );

/** Deletes `count` stored bindings named `prefix`..., and waits until the count holds what is left. */
async function deleteSome(prefix: string, count = Infinity): Promise<void> {
  const named = (await scenario.tenant.bindings()).filter((rb) => rb.metadata!.name!.startsWith(prefix));
  for (const rb of named.slice(0, count)) await deleteBinding(rb.metadata!.name!);
  const stored = await storedMilliCpu();
  await eventually(
    async () => milli((await scenario.tenant.quota('team')).status?.reserved?.cpu ?? '0'),
    (reserved) => reserved === stored,
    30_000,
  );
}

/** Bindings of 100m from 8 clients until stopped, well past the room left. */
function load(prefix: string) {
  const outcomes: { at: number; outcome: Outcome }[] = [];
  let stop = false;
  const client = async (c: number) => {
    for (let i = 0; !stop; i++) {
      outcomes.push({ outcome: await createOnce(`${prefix}-${c}-${i}`, '100m'), at: Date.now() });
      await sleep(50);
    }
  };
  const running = Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
  return {
    outcomes,
    stop: async () => {
      stop = true;
      await running;
    },
  };
}

/** Whether the quota decided (not failed closed, not unreached): final, as Karmada takes it. */
const decided = (outcome: Outcome): boolean => outcome === 'admitted' || outcome === 'denied';

/** How many of each outcome. */
const tally = (outcomes: readonly Outcome[]): Partial<Record<Outcome, number>> =>
  outcomes.reduce<Partial<Record<Outcome, number>>>((t, o) => ({ ...t, [o]: (t[o] ?? 0) + 1 }), {});

/**
 * How long after `since` an increase is decided again (admitted or denied, not refused for the owner's
 * absence): probes 50 ms apart, so the figure is late by at most that and a probe's round trip.
 */
async function admittingAgain(since: number): Promise<number> {
  while (Date.now() - since < 60_000) {
    const outcome = await createOnce(`probe-${Date.now()}`, '100m');
    if (decided(outcome)) return Date.now() - since;
    await sleep(50);
  }
  throw new Error('increases were still refused 60 s after the owner went');
}

test('two replicas, one owner: never over the limit, the other forwards, no claim in any status', async () => {
  const first = await eventually(owner, (o) => o !== undefined, 30_000);
  const other = 1 - first!;
  const names = Array.from({ length: 15 }, (_, i) => `first-${i}`);
  const outcomes = await Promise.all(names.map((name) => createOnce(name)));
  const claimsSettled = () =>
    eventually(
      async () => metricValue(await metrics(first!), 'karmada_quota_admission_owner_claims'),
      (claims) => claims === 0,
      30_000,
    );
  await claimsSettled();
  // On a loaded machine a create may fail closed (the API server's call or a forward out of time);
  // Karmada sends such a write again. Sent again once what its decision may have claimed has lapsed
  // (the landing window), each is decided, and the tally is exact.
  const failedClosed = names.filter((_, i) => !decided(outcomes[i]!));
  process.stderr.write(
    `[admission-owner] ${failedClosed.length} of 15 creates failed closed and were sent again\n`,
  );
  for (const name of failedClosed) {
    let outcome: Outcome;
    do outcome = await createOnce(name);
    while (!decided(outcome));
    outcomes[names.indexOf(name)] = outcome;
  }
  expect(tally(outcomes)).toEqual({ admitted: 10, denied: 5 });
  expect(await storedMilliCpu()).toBe(10_000);
  // The proxy spread the API server's connections: the other replica's changes were decided by the owner.
  expect(await forwarded(other, 'answered')).toBeGreaterThan(0);
  expect(await forwarded(other, 'failed')).toBeLessThanOrEqual(failedClosed.length);
  await claimsSettled();
  expect(await createOnce('one-too-many')).toBe('denied');
  // Nothing was written to a status by admission: no version of the quota ever listed a claim.
  expect(scenario.recorder.of('team').every((sample) => sample.reservations.length === 0)).toBe(true);
  expect(scenario.recorder.violations()).toEqual([]);
});

test('the owner killed mid-load: the other replica takes over charging its budgets; increases refused for about a Lease duration, decreases never', async () => {
  await deleteSome('first-', 4);
  const dying = (await owner())!;
  const survivor = 1 - dying;
  const running = load('killed');
  await sleep(1_000);
  const takeover = takeoverGapMs();
  await scenario.webhooks[dying]!.process.kill();
  const killedAt = Date.now();
  // A decrease through the survivor at once, before it holds the Lease: admitted.
  const shrinking = (await scenario.tenant.bindings()).filter((rb) =>
    rb.metadata!.name!.startsWith('first-'),
  );
  const decreases = [];
  for (const rb of shrinking.slice(0, 2)) {
    let outcome: Outcome;
    do outcome = await scaleDownOnce(rb.metadata!.name!);
    while (outcome === 'unreached'); // a connection to the killed replica, reset
    decreases.push(outcome);
  }
  expect(decreases).toEqual(['admitted', 'admitted']);
  const refusedFor = await admittingAgain(killedAt);
  await running.stop();
  expect(await owner()).toBe(survivor);
  process.stderr.write(
    `[admission-owner] increases refused for ${refusedFor} ms after the owner was killed\n`,
  );
  // The survivor's watch saw the dead owner's last renew as it landed, and it took the Lease the moment
  // that expired: a Lease duration after it, never sooner, and not a retry period later (as when it
  // saw the renew only at its next read). So increases were refused at most the Lease duration after
  // the kill, and the taking write and a probe (500 ms); never the window.
  const gap = await takeover;
  process.stderr.write(`[admission-owner] the survivor took the Lease ${gap} ms after the last renew\n`);
  expect(gap).toBeGreaterThanOrEqual(LEASE_SECONDS * 1000);
  expect(gap).toBeLessThan(LEASE_SECONDS * 1000 + 150);
  expect(refusedFor).toBeLessThan(LEASE_SECONDS * 1000 + 500);
  expect(refusedFor).toBeLessThan(LANDING_WINDOW_SECONDS * 1000);
  expect(running.outcomes.some((o) => o.outcome === 'unavailable' && o.at > killedAt)).toBe(true);
  expect(await storedMilliCpu()).toBeLessThanOrEqual(10_000);
  await expectRecountMatches(scenario.tenant);
  expect(scenario.recorder.violations()).toEqual([]);
  await scenario.restartWebhook(dying);
});

test('the owner paused past its Lease: the other takes over, and the paused one decides nothing once it resumes', async () => {
  await deleteSome('killed-');
  await deleteSome('probe-');
  const paused = (await eventually(owner, (o) => o !== undefined, 30_000))!;
  const other = 1 - paused;
  const running = load('paused');
  await sleep(500);
  scenario.webhooks[paused]!.process.pause();
  const pausedAt = Date.now();
  await eventually(
    async () => metricValue(await metrics(other), 'karmada_quota_admission_owner'),
    (o) => o === 1,
    30_000,
  );
  const refusedFor = await admittingAgain(pausedAt);
  scenario.webhooks[paused]!.process.resume();
  // It lost the Lease while stopped: it says so, and forwards to the new owner.
  await eventually(
    async () => metricValue(await metrics(paused), 'karmada_quota_admission_owner'),
    (o) => o === 0,
    10_000,
  );
  const forwardedBefore = await forwarded(paused, 'answered');
  await eventually(
    () => forwarded(paused, 'answered'),
    (count) => count > forwardedBefore,
    20_000,
  );
  await running.stop();
  process.stderr.write(
    `[admission-owner] increases refused for ${refusedFor} ms after the owner was paused\n`,
  );
  expect(await owner()).toBe(other);
  expect(await storedMilliCpu()).toBeLessThanOrEqual(10_000);
  expect(running.outcomes.filter((o) => o.outcome === 'admitted').length).toBeGreaterThan(0);
  await expectRecountMatches(scenario.tenant);
  expect(scenario.recorder.violations()).toEqual([]);
});

const fenced = async (replica: number): Promise<number> =>
  metricValue(await metrics(replica), 'karmada_quota_admission_fenced') ?? -1;

/** Deletes a stored binding of `prefix` every 150 ms until stopped: room freed for the load to race for. */
function churn(prefix: string) {
  let stop = false;
  const running = (async () => {
    while (!stop) {
      const named = (await scenario.tenant.bindings()).filter((rb) => rb.metadata!.name!.startsWith(prefix));
      const victim = named[Math.floor(Math.random() * named.length)];
      if (victim) await deleteBinding(victim.metadata!.name!).catch(() => undefined);
      await sleep(150);
    }
  })();
  return {
    stop: async () => {
      stop = true;
      await running;
    },
  };
}

test('a rolling switch of mode under load, owner to batched and back: never over the limit, increases refused only for the switch', async () => {
  await deleteSome('paused-');
  const running = load('switch');
  const churning = churn('switch');
  try {
    const batched = { ADMISSION_MODE: 'batched' };
    const owned = { ADMISSION_MODE: 'owner' };

    // Owner to batched, the replica not holding the Lease first, as a rolling update replaces pods.
    const holder = (await eventually(owner, (o) => o !== undefined, 30_000))!;
    const other = 1 - holder;
    await scenario.webhooks[other]!.process.stop();
    await scenario.restartWebhook(other, batched);
    // Beside the owner it decides no increase (the fence): its changes fail closed, the owner's are decided.
    expect(await fenced(other)).toBe(1);
    await sleep(6_000);
    // Both replicas took changes while room was freed all along: with the fence undone the batched
    // one decides from statuses that miss the owner's claims, and admits past the limit.
    expect(scenario.recorder.violations()).toEqual([]);
    expect(await storedMilliCpu()).toBeLessThanOrEqual(10_000);
    await scenario.webhooks[holder]!.process.stop(); // hands the Lease over
    const ownerGoneAt = Date.now();
    await scenario.restartWebhook(holder, batched);
    const refusedAfterOwner = await admittingAgain(ownerGoneAt);
    process.stderr.write(
      `[admission-owner] owner to batched: increases refused for ${refusedAfterOwner} ms after the owner stopped\n`,
    );
    // What the owner admitted lands within the window: only then, and once counted, do the batched decide.
    expect(refusedAfterOwner).toBeGreaterThanOrEqual((LANDING_WINDOW_SECONDS - 1) * 1000);
    expect(refusedAfterOwner).toBeLessThan((LANDING_WINDOW_SECONDS + 15) * 1000);
    await eventually(
      async () => (await fenced(0)) + (await fenced(1)),
      (sum) => sum === 0,
      20_000,
    );
    // The batched modes decide with claims in the status again.
    await eventually(
      () => Promise.resolve(scenario.recorder.of('team').some((sample) => sample.reservations.length > 0)),
      (claimed) => claimed,
      20_000,
    );
    await sleep(2_000);

    // Batched to owner: the first owner takes the Lease the batched webhooks marked, and waits out
    // what they may still admit (the landing window past the renew deadline) and a count.
    await scenario.webhooks[0]!.process.stop();
    await scenario.restartWebhook(0, owned);
    await eventually(owner, (o) => o === 0, 30_000);
    const tookAt = Date.now();
    await eventually(
      () => fenced(1),
      (f) => f === 1,
      10_000,
    );
    await scenario.webhooks[1]!.process.stop();
    await scenario.restartWebhook(1, owned);
    const refusedAfterBatched = await admittingAgain(tookAt);
    process.stderr.write(
      `[admission-owner] batched to owner: increases refused for ${refusedAfterBatched} ms after the owner took the Lease\n`,
    );
    expect(refusedAfterBatched).toBeGreaterThanOrEqual((LANDING_WINDOW_SECONDS + 3 - 2) * 1000);
    await sleep(2_000);
  } finally {
    await churning.stop();
    await running.stop();
  }

  expect(running.outcomes.filter((o) => o.outcome === 'admitted').length).toBeGreaterThan(0);
  expect(await storedMilliCpu()).toBeLessThanOrEqual(10_000);
  await expectRecountMatches(scenario.tenant);
  expect(scenario.recorder.violations()).toEqual([]);
});
