import * as k8s from '@kubernetes/client-node';
import { z } from 'zod';
import { describeError, isApiStatus } from '#api';
import { Quantity } from '#quantity';
import { isResourceVersion } from '#quota';
import { leaseNamespaceMissing, microTime } from './leases.js';
import { abortAt, ConflictError } from './quota-store.js';

/*
 * The admission owner's Lease (design C, docs/development/plans/admission-owner.md, "The Lease"): the
 * seam AdmissionLease (libs/accounting) decides over, and its Kubernetes implementation.
 */

export const ADMISSION_LEASE_NAME = 'karmada-quota-admission';
/** The Lease annotation holding the AdmissionRecord, as JSON. */
export const ADMISSION_ANNOTATION = 'quota.karmada.io/admission';

/**
 * What an owner hands on with the Lease: where it answers, and the ghosts its successor charges until
 * an owner has held the Lease a landing window and the counts caught up (the owner's ledger decides).
 */
export interface AdmissionRecord {
  /** Where the holder answers forwarded decisions (host:port). */
  address?: string;
  /** Per quota key: increases a predecessor handed over still in flight, in wire form. */
  ghosts: Record<string, Record<string, string>>;
  /** A holder stopped without handing over: what it admitted is unknown, so every increase waits. */
  unknownInFlight: boolean;
  /**
   * Per quota key: the newest count (`observedBindingsVersion`) a holder handing over had seen and
   * retired claims against; its successor decides on that quota only from a count at least as new.
   */
  counted: Record<string, string>;
  /**
   * Per quota key: the holder's in-flight budget, an upper bound on what it admitted that may not be
   * counted yet (beyond the ghosts), written before it is exceeded. A successor taking over after a
   * crash charges these as ghosts; a held record without them (an older version's) leaves what is in
   * flight unknown.
   */
  budgets?: Record<string, Record<string, string>>;
  /**
   * Written only on a free Lease, by a webhook in a batched mode: the batched modes decide now
   * (libs/accounting batched-fence.ts). `countedFrom`: when an owner decided before, a binding list's
   * resourceVersion taken a landing window after its tenure ended; a quota counted at or past it
   * holds all the owner admitted.
   */
  batched?: { countedFrom?: string };
}

/** The Lease as read or written. */
export interface AdmissionLeaseState {
  /** Empty when released. */
  holder: string;
  durationSeconds: number;
  /** leaseTransitions: one more at each change of holder (an epoch for later fencing). */
  transitions: number;
  record: AdmissionRecord;
  resourceVersion: string;
}

/** The Lease on the Karmada API server. */
export interface LeaseApi {
  /** The Lease, or undefined when there is none. */
  read(): Promise<AdmissionLeaseState | undefined>;
  /** Creates it (`expected` undefined) or replaces it by compare-and-swap; ConflictError when it changed. */
  write(
    next: Omit<AdmissionLeaseState, 'resourceVersion'>,
    expected: string | undefined,
  ): Promise<AdmissionLeaseState>;
}

const quantity = z.string().refine((text) => {
  try {
    Quantity.parse(text);
    return true;
  } catch {
    return false;
  }
});
const admissionRecord = z.object({
  address: z.string().optional(),
  ghosts: z.record(z.string(), z.record(z.string(), quantity)),
  unknownInFlight: z.boolean(),
  counted: z.record(z.string(), z.string().refine(isResourceVersion)),
  budgets: z.record(z.string(), z.record(z.string(), quantity)).optional(),
  batched: z.object({ countedFrom: z.string().refine(isResourceVersion).optional() }).optional(),
});

/** Nothing handed over: a Lease no owner has held yet (one made by hand, say). */
const NOTHING_HANDED_OVER: AdmissionRecord = { ghosts: {}, unknownInFlight: false, counted: {} };

/**
 * The record as the annotation holds it. Missing on a free Lease: no owner ever wrote it (an owner's
 * every write carries the record), so nothing was handed over. Missing on a held one, or garbled on
 * any: what its writer admitted cannot be known, so it reads as the most cautious record,
 * `unknownInFlight` and no ghosts, as after a crash: a successor then refuses increases until the
 * counts have caught up with everything that may have landed, where any lesser reading (no ghosts,
 * nothing unknown) would let it decide on a count that misses its predecessor's admissions.
 */
export function admissionRecordOf(annotation: string | undefined, held: boolean): AdmissionRecord {
  if (annotation === undefined && !held) return NOTHING_HANDED_OVER;
  let decoded: unknown;
  try {
    decoded = JSON.parse(annotation ?? '');
  } catch {
    decoded = undefined;
  }
  const parsed = admissionRecord.safeParse(decoded);
  return parsed.success ? parsed.data : { ghosts: {}, unknownInFlight: true, counted: {} };
}

/**
 * The Lease object as AdmissionLease reads it. A missing leaseDurationSeconds reads as 0: the reader
 * then waits its own duration (AdmissionLease takes the longer of the two).
 */
export function admissionLeaseStateOf(lease: k8s.V1Lease): AdmissionLeaseState {
  const holder = lease.spec?.holderIdentity ?? '';
  return {
    holder,
    durationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
    transitions: lease.spec?.leaseTransitions ?? 0,
    record: admissionRecordOf(lease.metadata?.annotations?.[ADMISSION_ANNOTATION], holder !== ''),
    resourceVersion: lease.metadata?.resourceVersion ?? '',
  };
}

/**
 * The Lease object to write for `next` at `now`, over `previous` (the object as read at the version
 * replaced; undefined for a create, or when that object is not known here). Keeps what others wrote
 * (labels, other annotations). renewTime and acquireTime are for people reading `kubectl get lease`
 * only (AdmissionLease judges expiry by its own monotonic clock): renewTime is each write's,
 * acquireTime the current holder's first, none while free.
 */
export function admissionLeaseObjectFor(
  next: Omit<AdmissionLeaseState, 'resourceVersion'>,
  now: Date,
  previous?: k8s.V1Lease,
): k8s.V1Lease {
  const previousAcquireTime = previous?.spec?.acquireTime;
  const sameHolder = (previous?.spec?.holderIdentity ?? '') === next.holder;
  const acquireTime =
    next.holder === '' ? undefined : sameHolder && previousAcquireTime ? previousAcquireTime : now;
  return {
    metadata: {
      ...previous?.metadata,
      annotations: {
        ...previous?.metadata?.annotations,
        [ADMISSION_ANNOTATION]: JSON.stringify(next.record),
      },
    },
    spec: {
      ...previous?.spec,
      holderIdentity: next.holder,
      leaseDurationSeconds: next.durationSeconds,
      leaseTransitions: next.transitions,
      acquireTime: acquireTime && microTime(new Date(acquireTime)),
      renewTime: microTime(now),
    },
  };
}

export interface KubeAdmissionLeaseOptions {
  /** LEASE_NAMESPACE: must exist. */
  namespace: string;
  /**
   * Each call is given up after this long: a write answered after the renew deadline is of no use
   * (AdmissionLease stops deciding by then), and a hung read would hold up the next renew. Keep it
   * below the renew deadline.
   */
  callTimeoutMs?: number;
}

/**
 * The admission Lease (ADMISSION_LEASE_NAME) on the Karmada API server: a create, or a replace by
 * compare-and-swap on resourceVersion. Not retried here: AdmissionLease's next round reads afresh.
 */
/**
 * A watch of the admission Lease alone (list and watch on leases, by a field selector on its name):
 * an owner-mode process sees each renew as it lands, not only at its next read.
 */
export function admissionLeaseInformer(kc: k8s.KubeConfig, namespace: string): k8s.Informer<k8s.V1Lease> {
  const api = kc.makeApiClient(k8s.CoordinationV1Api);
  const fieldSelector = `metadata.name=${ADMISSION_LEASE_NAME}`;
  return new k8s.ListWatch<k8s.V1Lease>(
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
    new k8s.Watch(kc),
    () => api.listNamespacedLease({ namespace, fieldSelector }),
    false,
    undefined,
    fieldSelector,
  );
}

export class KubeAdmissionLeaseApi implements LeaseApi {
  private readonly api: k8s.CoordinationV1Api;
  private readonly namespace: string;
  private readonly callTimeoutMs: number;
  /** The Lease as last read or written: what a replace at its version keeps (labels, acquireTime). */
  private last?: k8s.V1Lease;

  constructor(kc: k8s.KubeConfig, options: KubeAdmissionLeaseOptions) {
    this.api = kc.makeApiClient(k8s.CoordinationV1Api);
    this.namespace = options.namespace;
    this.callTimeoutMs = options.callTimeoutMs ?? 5_000;
  }

  async read(): Promise<AdmissionLeaseState | undefined> {
    try {
      this.last = await this.api.readNamespacedLease(
        { name: ADMISSION_LEASE_NAME, namespace: this.namespace },
        this.bounded(),
      );
    } catch (err) {
      if (isApiStatus(err, 404)) return undefined;
      throw this.failure('get', err);
    }
    return admissionLeaseStateOf(this.last);
  }

  async write(
    next: Omit<AdmissionLeaseState, 'resourceVersion'>,
    expected: string | undefined,
  ): Promise<AdmissionLeaseState> {
    const { namespace } = this;
    const name = ADMISSION_LEASE_NAME;
    const previous =
      expected !== undefined && this.last?.metadata?.resourceVersion === expected ? this.last : undefined;
    const object = admissionLeaseObjectFor(next, new Date(), previous);
    const body = { ...object, metadata: { ...object.metadata, name, namespace, resourceVersion: expected } };
    try {
      this.last =
        expected === undefined
          ? await this.api.createNamespacedLease({ namespace, body }, this.bounded())
          : await this.api.replaceNamespacedLease({ name, namespace, body }, this.bounded());
    } catch (err) {
      if (isApiStatus(err, 409))
        throw new ConflictError(
          expected === undefined
            ? `Lease ${namespace}/${name} was created meanwhile`
            : `Lease ${namespace}/${name} changed meanwhile`,
        );
      // A create's 404 is the namespace's; a replace's, the Lease gone with it (a Lease deleted alone
      // answers 409): the next read tells.
      if (isApiStatus(err, 404)) {
        if (expected === undefined) throw leaseNamespaceMissing(namespace, err);
        throw new ConflictError(`Lease ${namespace}/${name} was deleted meanwhile`);
      }
      throw this.failure(expected === undefined ? 'create' : 'update', err);
    }
    return admissionLeaseStateOf(this.last);
  }

  private bounded(): k8s.ConfigurationOptions | undefined {
    return abortAt(Date.now() + this.callTimeoutMs);
  }

  /** Why a call failed, with what to do about it. */
  private failure(verb: 'get' | 'create' | 'update', err: unknown): Error {
    const lease = `Lease ${this.namespace}/${ADMISSION_LEASE_NAME}`;
    if (isApiStatus(err, 403))
      return new Error(
        `the Karmada API server refused to ${verb} ${lease} (${describeError(err)}): grant the webhook ` +
          `coordination.k8s.io leases get, create and update in namespace ${this.namespace} ` +
          `(the chart's Role <release>-karmada-quota-webhook-leases)`,
        { cause: err },
      );
    if (err instanceof Error && err.name === 'AbortError')
      return new Error(
        `the Karmada API server did not answer within ${this.callTimeoutMs} ms when asked to ${verb} ` +
          `${lease}; is it up and reachable?`,
        { cause: err },
      );
    return new Error(`cannot ${verb} ${lease} on the Karmada API server: ${describeError(err)}`, {
      cause: err,
    });
  }
}
