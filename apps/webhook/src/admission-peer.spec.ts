import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { PeerCertificate } from 'node:tls';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import type { ResourceBinding } from '#api';
import { bindingChange, type AdmissionOutcome, type BindingChange } from '#accounting';
import { bindingCharge } from '#quota';
import {
  createServingCertificate,
  freePort,
  type ServingCertificate,
} from '../../../tools/federation/src/index.js';
import { AdmissionPeer, decodeForwarded, decodeOutcome, forwardedBody, isPeer } from './admission-peer.js';

const binding = (
  name: string,
  cpu: string,
  extra: Partial<ResourceBinding['metadata']> = {},
): ResourceBinding => ({
  apiVersion: 'work.karmada.io/v1alpha2',
  kind: 'ResourceBinding',
  metadata: { name, namespace: 'team', uid: `uid-${name}`, resourceVersion: '7', ...extra },
  spec: {
    resource: { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: 'team' },
    replicas: 2,
    replicaRequirements: { resourceRequest: { cpu } },
    clusters: [{ name: 'member1', replicas: 2 }],
  },
});

const changeOf = (object: ResourceBinding, old?: ResourceBinding): BindingChange =>
  bindingChange(
    { namespace: 'team', name: object.metadata!.name! },
    object,
    bindingCharge(object).charge,
    false,
    old,
  );

const REFUSED: AdmissionOutcome = {
  allowed: false,
  message: 'team/q: cpu exceeded',
  quota: 'team/q',
  exceeded: ['cpu'],
};

describe('AdmissionPeer: forwarding to the admission owner over mutual TLS', () => {
  let dir: string;
  let tls: ServingCertificate;
  let other: ServingCertificate;
  let bothCas: string;
  const started: AdmissionPeer[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'admission-peer-'));
    tls = await createServingCertificate(dir, 'webhook');
    const otherDir = join(dir, 'other');
    mkdirSync(otherDir);
    other = await createServingCertificate(otherDir, 'webhook');
    bothCas = join(dir, 'both-cas.crt');
    writeFileSync(bothCas, tls.caPem + other.caPem);
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((peer) => peer.onApplicationShutdown()));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A replica's peer port, started, over `owner`. */
  async function peer(
    owner: ConstructorParameters<typeof AdmissionPeer>[0],
    certificate = tls,
    peerCaFile = certificate.caFile,
  ): Promise<{ peer: AdmissionPeer; address: string; registry: Registry }> {
    const port = await freePort();
    const registry = new Registry();
    const started_ = new AdmissionPeer(
      owner,
      {
        bindAddress: '127.0.0.1',
        port,
        certFile: certificate.certFile,
        keyFile: certificate.keyFile,
        peerCaFile,
        reloadSeconds: 60,
      },
      registry,
    );
    await started_.onApplicationBootstrap();
    started.push(started_);
    return { peer: started_, address: `127.0.0.1:${port}`, registry };
  }

  const forwarded = async (registry: Registry, result: string) =>
    (await registry.getSingleMetric('karmada_quota_admission_forwarded_total')!.get()).values.find(
      (v) => v.labels.result === result,
    )?.value ?? 0;

  test("a replica answers with the owner's decision, the owner deciding the change as judged", async () => {
    const seen: BindingChange[] = [];
    const owner = await peer({
      forwardTo: undefined,
      admit: async (change) => (seen.push(change), REFUSED),
    });
    const replica = await peer({
      forwardTo: owner.address,
      admit: () => Promise.reject(new Error('a replica with an owner elsewhere does not decide')),
    });
    const old = binding('web', '1');
    const object = binding('web', '3', { managedFields: [{ manager: 'karmada-controller-manager' }] });
    const outcome = await replica.peer.strategy.admit(changeOf(object, old), Date.now() + 2_000);
    expect(outcome).toEqual(REFUSED);
    expect(seen).toHaveLength(1);
    // The owner computed the same charges, from the objects without their managedFields.
    expect(seen[0]!.item).toEqual(changeOf(object, old).item);
    expect(seen[0]!.old?.charge).toEqual(changeOf(object, old).old?.charge);
    expect(seen[0]!.object.metadata?.managedFields).toBeUndefined();
    expect(await forwarded(replica.registry, 'answered')).toBe(1);
  });

  test('while this process decides (no other holder known), the change is decided here', async () => {
    const outcome: AdmissionOutcome = { allowed: true };
    const replica = await peer({ forwardTo: undefined, admit: async () => outcome });
    expect(await replica.peer.strategy.admit(changeOf(binding('web', '1')), Date.now() + 1_000)).toBe(
      outcome,
    );
  });

  test.each([
    [
      'an owner address nobody answers at',
      async () => `127.0.0.1:${await freePort()}`,
      'could not be reached in time',
    ],
    [
      'an owner that does not answer by the deadline',
      async () => (await peer({ forwardTo: undefined, admit: () => new Promise(() => {}) })).address,
      'could not be reached in time',
    ],
    [
      // It trusts the replica's CA as well, so only the replica's check of the owner refuses.
      'an owner with a certificate from another CA',
      async () =>
        (await peer({ forwardTo: undefined, admit: async () => ({ allowed: true }) }, other, bothCas))
          .address,
      'could not be reached in time',
    ],
    [
      'an owner whose decision throws',
      async () =>
        (await peer({ forwardTo: undefined, admit: () => Promise.reject(new Error('a bug in decide')) }))
          .address,
      'failed deciding the change (a bug in decide)',
    ],
  ])(
    '%s: the replica fails closed, naming the owner, within its deadline',
    async (what, ownerAt, message) => {
      const address = await ownerAt();
      const replica = await peer({ forwardTo: address, admit: () => Promise.reject(new Error('not here')) });
      const startedAt = Date.now();
      const outcome = await replica.peer.strategy.admit(changeOf(binding('web', '1')), startedAt + 500);
      expect(Date.now() - startedAt).toBeLessThan(2_000);
      expect(outcome).toMatchObject({ allowed: false, unavailable: true });
      const throws = what.includes('throws');
      expect((outcome as { message: string }).message).toContain(
        throws ? `the admission owner ${message}` : `the admission owner at ${address} ${message}`,
      );
      // An owner's refusal is an answer: the replica passes it on.
      expect(await forwarded(replica.registry, throws ? 'answered' : 'failed')).toBe(1);
    },
  );

  test.each([
    ['IP Address:127.0.0.1, DNS:localhost', true],
    ['IP Address:127.0.0.1, DNS:localhost, DNS:other', false],
    ['DNS:localhost', false],
    [undefined, false],
  ])(
    'a certificate for %s is a peer of one for IP Address:127.0.0.1, DNS:localhost: %s',
    (names, expected) => {
      const cert = names === undefined ? undefined : ({ subjectaltname: names } as PeerCertificate);
      expect(isPeer(cert, 'IP Address:127.0.0.1, DNS:localhost')).toBe(expected);
    },
  );

  test('the peer port decides only for a caller presenting a certificate for the same names from the peer CA', async () => {
    const owner = await peer({ forwardTo: undefined, admit: async () => ({ allowed: true }) });
    const status = (cert?: ServingCertificate) =>
      new Promise<number | string>((resolve) => {
        const [host, port] = owner.address.split(':');
        const req = request(
          {
            host,
            port,
            path: '/admission/decide',
            method: 'POST',
            ca: readFileSync(tls.caFile),
            checkServerIdentity: () => undefined,
            ...(cert ? { cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) } : {}),
          },
          (res) => resolve(res.statusCode ?? 0),
        );
        req.on('error', (err) => resolve(err.message));
        req.end(forwardedBody(changeOf(binding('web', '1')), 1_000));
      });
    expect(await status(tls)).toBe(200);
    // Without a certificate, or with one from another CA: the handshake fails.
    expect(typeof (await status())).toBe('string');
    expect(typeof (await status(other))).toBe('string');
  });
});

describe('the forwarded wire forms', () => {
  test.each([
    [[], 'a forwarded change must be a JSON object'],
    [{ name: 'web', dryRun: false, object: {}, budgetMs: 5 }, 'names no namespace and name'],
    [
      { namespace: 'team', name: 'web', dryRun: false, object: { spec: {} }, budgetMs: 0 },
      'positive budgetMs',
    ],
    [
      { namespace: 'team', name: 'web', dryRun: false, object: { metadata: {} }, budgetMs: 5 },
      'lacks the ResourceBinding',
    ],
    [
      { namespace: 'team', name: 'web', dryRun: false, object: { spec: {} }, oldObject: 'x', budgetMs: 5 },
      'lacks the ResourceBinding',
    ],
  ])('decodeForwarded(%j) is refused: %s', (body, error) => {
    expect(decodeForwarded(body)).toEqual({ error: expect.stringContaining(error) });
  });

  test('a forwarded change decodes to the change it was made from, dry run and budget included', () => {
    const change = { ...changeOf(binding('web', '2'), binding('web', '1')) };
    const dry = { ...change, item: { ...change.item, dryRun: true } };
    const decoded = decodeForwarded(JSON.parse(forwardedBody(dry, 1_234)));
    expect(decoded).toEqual({ change: dry, budgetMs: 1_234 });
  });

  test.each([
    [{ allowed: true }, undefined],
    [{ allowed: true, notEnforced: [{ quota: 'q', enforcement: 'Warn', message: 'm' }] }, undefined],
    [REFUSED, undefined],
    [{ allowed: false, unavailable: true, message: 'fail closed' }, undefined],
    [{}, 'without a decision'],
    [{ allowed: false }, 'without a message'],
    [{ allowed: false, message: 'no' }, 'without naming the quota'],
  ])('decodeOutcome(%j) %s', (body, error) => {
    if (error === undefined) expect(decodeOutcome(body)).toEqual(body);
    else expect(() => decodeOutcome(body)).toThrow(error);
  });
});
