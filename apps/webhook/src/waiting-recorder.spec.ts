import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ResourceBinding } from '#api';
import { decodeWaiting, usageUnknownMessage, type WaitingChange } from '#quota';
import { RECONCILE_QUEUE, waitingAdmittedKey, waitingKey, type ReconcileJob } from '#usage';
import { testRedisUrl } from '../../../test/support/federation.js';
import { WaitingRecorder } from './waiting-recorder.js';

// Real Redis: the recorder's writes race the reconciler's on the same hash. Each test has its own
// namespace (so its own key) and queue prefix: nothing is flushed, nothing reaches a reconciler.
const REDIS_URL = testRedisUrl(15);

let redis: Redis;
let queueConnection: Redis;
let queue: Queue<ReconcileJob>;
let recorder: WaitingRecorder;
let namespace: string;

beforeEach(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  namespace = `waiting-${randomUUID().slice(0, 8)}`;
  queue = new Queue<ReconcileJob>(RECONCILE_QUEUE, {
    connection: (queueConnection = redis.duplicate()),
    prefix: `test-${namespace}`,
  });
  recorder = new WaitingRecorder(redis, queue);
});

afterEach(async () => {
  await redis.del(waitingKey(namespace));
  await queue.obliterate({ force: true });
  await recorder.onApplicationShutdown();
  queueConnection.disconnect(); // BullMQ leaves a connection it was given open
  redis.disconnect();
});

const binding = (name: string, spec: Partial<ResourceBinding['spec']> = {}): ResourceBinding => ({
  metadata: { name, namespace: 'ignored', uid: `uid-${name}`, generation: 1 },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', name },
    replicas: 2,
    replicaRequirements: { resourceRequest: { cpu: '1' } },
    clusters: [{ name: 'member1', replicas: 2 }],
    ...spec,
  },
});

const waiting = (name: string, overrides: Partial<WaitingChange> = {}): WaitingChange => ({
  binding: name,
  uid: `uid-${name}`,
  quota: 'compute',
  requested: { cpu: '2' },
  free: { cpu: '1' },
  needs: { cpu: '4' },
  since: '2026-11-24T12:00:00.000Z',
  lastRefusedAt: '2026-11-24T12:00:05.000Z',
  retryVia: 'scheduler',
  ...overrides,
});

const stored = async (): Promise<Record<string, string>> => redis.hgetall(waitingKey(namespace));

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('the admission of a requeue’s own poke (spec.rescheduleTriggeredAt) keeps the record it marked', async () => {
  // The reconciler marked web requeued, then patched its rescheduleTriggeredAt: the webhook admits
  // that patch. Another binding's admitted spec change is sent after it, on the same connection.
  const marked = JSON.stringify(waiting('web', { requeuedAt: '2026-11-24T12:00:10.000Z' }));
  await redis.hset(waitingKey(namespace), 'web', marked, 'api', JSON.stringify(waiting('api')));
  recorder.admitted(
    namespace,
    binding('web', { rescheduleTriggeredAt: '2026-11-24T12:00:11Z' }),
    binding('web'),
  );
  recorder.admitted(namespace, binding('api', { replicas: 3 }), binding('api'));
  // Redis runs one connection's commands in order: once api's delete is done, so is any for web.
  const left = await until('api is forgotten', stored, (records) => !('api' in records));
  expect(left).toEqual({ web: marked });
});

test('a "status unknown" refusal is recorded, nothing requested, and queues a reconcile to count it', async () => {
  const refusal = {
    allowed: false as const,
    quota: 'compute',
    exceeded: [],
    message: usageUnknownMessage('compute', ['cpu']),
  };
  recorder.refused(namespace, binding('web', { replicas: 4 }), binding('web'), refusal);
  const records = await until('web is recorded', stored, (r) => 'web' in r);
  expect(decodeWaiting(records['web']!)).toMatchObject({
    binding: 'web',
    uid: 'uid-web',
    quota: 'compute',
    requested: {},
    free: {},
    retryVia: 'template',
  });
  const jobs = await until(
    'a reconcile is queued',
    () => queue.getJobs(),
    (j) => j.length > 0,
  );
  expect(jobs.map((job) => job.data)).toEqual([{ namespace, reason: 'ResourceBinding web refused' }]);
});

const overLimit = (requested: string, free: string) => ({
  allowed: false as const,
  quota: 'compute',
  exceeded: ['cpu'],
  message: 'exceeded quota: compute',
  shortfall: { requested: { cpu: requested }, free: { cpu: free } },
});

test('a binding refused many times between flushes costs Redis two reads and one write', async () => {
  // The recorder's own connection, each command it sends to real Redis about the binding noted.
  const counted = redis.duplicate();
  await counted.ping(); // connected: a command queued offline would be sent (and noted) twice
  const commands: string[] = [];
  const send = counted.sendCommand.bind(counted);
  const keys = [waitingKey(namespace), waitingAdmittedKey(namespace, 'web')];
  counted.sendCommand = (command, stream) => {
    if (command.args.some((arg) => keys.includes(String(arg)))) commands.push(command.name);
    return send(command, stream);
  };
  const own = new WaitingRecorder(counted, queue);
  try {
    for (let i = 0; i < 50; i++)
      own.refused(namespace, binding('web', { replicas: 4 }), binding('web'), overLimit('2', `${i}`));
    await own.flush();
    const records = await stored();
    // The latest refusal is the one recorded.
    expect(decodeWaiting(records['web']!)).toMatchObject({ requested: { cpu: '2' }, free: { cpu: '49' } });
    expect(commands.sort()).toEqual(['eval', 'get', 'hget']);
  } finally {
    counted.disconnect();
  }
});

test('a refusal after an admission in one flush starts a new wait; one before it is forgotten', async () => {
  const old = JSON.stringify(waiting('web', { since: '2026-11-24T12:00:00.000Z' }));
  await redis.hset(waitingKey(namespace), 'web', old, 'api', JSON.stringify(waiting('api')));
  // web: admitted, then refused again: a new wait, since now. api: refused, then admitted: none.
  recorder.admitted(namespace, binding('web', { replicas: 3 }), binding('web'));
  recorder.refused(
    namespace,
    binding('web', { replicas: 5 }),
    binding('web', { replicas: 3 }),
    overLimit('2', '0'),
  );
  recorder.refused(namespace, binding('api', { replicas: 5 }), binding('api'), overLimit('2', '0'));
  recorder.admitted(namespace, binding('api', { replicas: 3 }), binding('api'));
  await recorder.flush();
  const records = await stored();
  expect(Object.keys(records)).toEqual(['web']);
  const web = decodeWaiting(records['web']!) as WaitingChange;
  expect(Date.parse(web.since)).toBeGreaterThan(Date.parse('2026-11-25T00:00:00Z'));
  expect(web.since).toBe(web.lastRefusedAt);
});

test("replicas flushing out of order: a refusal decided before another replica's admission is not brought back, one after it stays", async () => {
  const at = (iso: string) => () => Date.parse(iso);
  const refusing = new WaitingRecorder(redis, queue, at('2026-11-29T10:00:00.000Z'));
  const admitting = new WaitingRecorder(redis, queue, at('2026-11-29T10:00:00.100Z'));
  // The refusal first, the admission 100 ms later, on different replicas.
  refusing.refused(
    namespace,
    binding('web', { replicas: 9 }),
    binding('web', { replicas: 2 }),
    overLimit('7', '0'),
  );
  admitting.admitted(namespace, binding('web', { replicas: 3 }), binding('web', { replicas: 2 }));
  await admitting.flush();
  await refusing.flush();
  expect(await stored()).toEqual({});

  // Refused 50 ms after an admission whose flush comes late.
  const later = new WaitingRecorder(redis, queue, at('2026-11-29T10:00:00.150Z'));
  const late = new WaitingRecorder(redis, queue, at('2026-11-29T10:00:00.100Z'));
  later.refused(
    namespace,
    binding('web', { replicas: 9 }),
    binding('web', { replicas: 3 }),
    overLimit('6', '0'),
  );
  await later.flush();
  late.admitted(namespace, binding('web', { replicas: 3 }), binding('web', { replicas: 2 }));
  await late.flush();
  expect(decodeWaiting((await stored())['web']!)).toMatchObject({ requested: { cpu: '6' } });
  await Promise.all([refusing, admitting, later, late].map((r) => r.onApplicationShutdown()));
});

test('a refusal nothing but a change of the binding cures drops an earlier refusal not flushed yet', async () => {
  recorder.refused(namespace, binding('web', { replicas: 4 }), binding('web'), overLimit('2', '1'));
  recorder.refused(namespace, binding('web', { replicas: 5 }), binding('web'), {
    allowed: false,
    quota: 'compute',
    exceeded: ['cpu'],
    message: 'failed quota: compute: must specify cpu',
  });
  await recorder.flush();
  expect(await stored()).toEqual({});
});

test('shutting down tells Redis what is pending', async () => {
  const connection = redis.duplicate();
  const ownQueue = new Queue<ReconcileJob>(RECONCILE_QUEUE, { connection, prefix: `test-${namespace}` });
  const slow = new WaitingRecorder(redis, ownQueue, Date.now, 60_000);
  slow.refused(namespace, binding('web', { replicas: 4 }), binding('web'), overLimit('2', '1'));
  expect(await stored()).toEqual({});
  await slow.onApplicationShutdown();
  expect(Object.keys(await stored())).toEqual(['web']);
  connection.disconnect();
});
