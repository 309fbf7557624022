/**
 * Serves Karmada's scheduler-estimator gRPC API (libs/api/proto/estimator.proto) when
 * SCHEDULER_ESTIMATOR_PORT is set: karmada-scheduler asks, per member, how many more replicas of a
 * binding fit there, and takes the minimum over its estimators. The answer is the room under the
 * member caps (libs/quota estimate.ts), read from the quota watch's memory. It never answers with an
 * error: one error makes Karmada drop every estimator answer for the binding, so doubt is "no opinion".
 * docs/concepts/scheduler-estimator.md says how to use it.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import { describeError, estimatorProtoFile } from '#api';
import { parseResourceList, type ResourceList } from '#quantity';
import { NO_ESTIMATE, perReplicaCharge, replicasRoomOn } from '#quota';
import type { WatchedQuotaStore } from './watched-quota-store.js';

const SERVICE = 'github.com.karmada_io.karmada.pkg.estimator.service.Estimator';

/** A Quantity as the proto carries it. */
interface WireQuantity {
  string?: string;
}

/** MaxAvailableReplicasRequest as decoded by proto-loader (keepCase, defaults). */
export interface WireReplicasRequest {
  cluster?: string;
  replicaRequirements?: {
    resourceRequest?: Record<string, WireQuantity>;
    namespace?: string;
    resourceRequestBytes?: Record<string, WireQuantity>;
  } | null;
}

/** What one MaxAvailableReplicas call asks, decoded. */
export interface ReplicasQuestion {
  member: string;
  namespace: string;
  requests: ResourceList;
}

/**
 * Decodes a MaxAvailableReplicas call; undefined when it cannot be answered (then: no opinion). The
 * namespace comes from the gRPC metadata `object` Karmada always sends (`kind=<Kind>, name=<ns>/<name>`),
 * else from the requirements (sent only with Karmada's ResourceQuotaEstimate gate). The requests from
 * `resourceRequestBytes`, else its deprecated twin.
 */
export function decodeReplicasQuestion(
  request: WireReplicasRequest,
  object: string | undefined,
): ReplicasQuestion | undefined {
  const member = request.cluster ?? '';
  const namespace =
    /(?:^|[\s,])name=([^/,\s]+)\//.exec(object ?? '')?.[1] ?? request.replicaRequirements?.namespace;
  if (member === '' || !namespace) return undefined;
  const requirements = request.replicaRequirements;
  const wire =
    requirements?.resourceRequestBytes && Object.keys(requirements.resourceRequestBytes).length > 0
      ? requirements.resourceRequestBytes
      : (requirements?.resourceRequest ?? {});
  const raw = Object.fromEntries(Object.entries(wire).map(([name, q]) => [name, q?.string ?? '']));
  const { list, errors } = parseResourceList(raw, 'replicaRequirements.resourceRequest');
  return errors.length > 0 ? undefined : { member, namespace, requests: list };
}

/** The smaller of two estimates, NO_ESTIMATE being no opinion. */
export function lowerEstimate(a: number, b: number): number {
  if (a === NO_ESTIMATE) return b;
  if (b === NO_ESTIMATE) return a;
  return Math.min(a, b);
}

/**
 * How long a call forwarded to Karmada's own estimator may take: karmada-scheduler gives all its
 * estimator calls for a binding 3 s, and an answer past that is dropped with ours.
 */
const FORWARD_TIMEOUT_MS = 1_500;

/** A MaxAvailableReplicas request as it came, and as decoded: the bytes are what is forwarded. */
interface ReplicasCall {
  raw: Buffer;
  request: WireReplicasRequest;
}

type Forward = (member: string, raw: Buffer, metadata: grpc.Metadata) => Promise<number>;

export class SchedulerEstimator implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('scheduler-estimator');
  private readonly server = new grpc.Server();
  private readonly answers: Counter<'answer'>;
  private readonly forwards: Counter<'result'>;
  private readonly clients = new Map<string, grpc.Client>();
  private forward?: Forward;

  constructor(
    private readonly quotas: WatchedQuotaStore,
    private readonly options: {
      host: string;
      port: number;
      /** Karmada's own estimator of each member, `{member}` in it standing for the member's name. */
      forwardTo?: string;
    },
    registry: Registry,
  ) {
    this.answers = new Counter({
      name: 'karmada_quota_estimator_answers_total',
      help: "Answers to karmada-scheduler's MaxAvailableReplicas: room under the member caps, or no opinion",
      labelNames: ['answer'],
      registers: [registry],
    });
    this.forwards = new Counter({
      name: 'karmada_quota_estimator_forwards_total',
      help: "MaxAvailableReplicas calls passed on to Karmada's own estimator of the member, by result",
      labelNames: ['result'],
      registers: [registry],
    });
  }

  /** How many more replicas fit on the member under the caps; NO_ESTIMATE on any doubt. */
  answer(request: WireReplicasRequest, object: string | undefined): number {
    const question = decodeReplicasQuestion(request, object);
    const quotas = question && this.quotas.watchedIn(question.namespace);
    return question && quotas
      ? replicasRoomOn(question.member, perReplicaCharge(question.requests), quotas)
      : NO_ESTIMATE;
  }

  /**
   * The answer to karmada-scheduler: ours, and with SCHEDULER_ESTIMATOR_FORWARD_TO the lower of ours
   * and what Karmada's own estimator of the member says (it knows the member's nodes). Its failure
   * leaves ours: it would have dropped every answer for the binding, had Karmada asked it directly.
   */
  private async answerCall(call: grpc.ServerUnaryCall<ReplicasCall, unknown>): Promise<number> {
    const { raw, request } = call.request;
    let room = this.answer(request, call.metadata.get('object')[0]?.toString());
    if (this.forward && request.cluster) {
      try {
        room = lowerEstimate(room, await this.forward(request.cluster, raw, call.metadata));
        this.forwards.inc({ result: 'answered' });
      } catch (err) {
        this.forwards.inc({ result: 'failed' });
        this.logger.warn(
          { member: request.cluster, error: describeError(err) },
          `Karmada's own estimator of member ${request.cluster} did not answer; answered from the caps alone`,
        );
      }
    }
    this.answers.inc({ answer: room === NO_ESTIMATE ? 'no-opinion' : 'room' });
    return room;
  }

  async onApplicationBootstrap(): Promise<void> {
    const definition = protoLoader.loadSync(estimatorProtoFile(), { keepCase: true, defaults: true });
    const service = grpc.loadPackageDefinition(definition);
    const estimator = SERVICE.split('.').reduce<unknown>(
      (node, part) => (node as Record<string, unknown>)[part],
      service,
    ) as grpc.ServiceClientConstructor;
    const methods = estimator.service;
    const replicas = methods['MaxAvailableReplicas']!;
    // The request's bytes are kept beside its decoding: forwarded as they came, with the fields this
    // trimmed API leaves out (node selectors, tolerations) that Karmada's own estimator reads.
    const keepingBytes: grpc.ServiceDefinition = {
      ...methods,
      MaxAvailableReplicas: {
        ...replicas,
        requestDeserialize: (raw: Buffer): ReplicasCall => ({
          raw,
          request: replicas.requestDeserialize(raw) as WireReplicasRequest,
        }),
      },
    };
    if (this.options.forwardTo) this.forward = this.forwarder(this.options.forwardTo, replicas);
    const respond =
      <T>(answer: (call: grpc.ServerUnaryCall<unknown, T>) => T | Promise<T>) =>
      (call: grpc.ServerUnaryCall<unknown, T>, callback: grpc.sendUnaryData<T>) => {
        Promise.resolve()
          .then(() => answer(call))
          .then(
            (reply) => callback(null, reply),
            (err: unknown) => {
              // Never an error to Karmada (see the file comment): no opinion instead.
              this.logger.warn(
                { error: describeError(err) },
                'could not answer karmada-scheduler; answered no opinion',
              );
              callback(null, {
                maxReplicas: NO_ESTIMATE,
                maxSets: NO_ESTIMATE,
                unschedulableReplicas: 0,
              } as T);
            },
          );
      };
    this.server.addService(keepingBytes, {
      MaxAvailableReplicas: respond(async (call) => ({
        maxReplicas: await this.answerCall(call as grpc.ServerUnaryCall<ReplicasCall, unknown>),
      })),
      // Multi-component workloads (an alpha Karmada gate): no opinion; the webhook still checks them.
      MaxAvailableComponentSets: respond(() => ({ maxSets: NO_ESTIMATE })),
      // Asked by the descheduler only: quota never makes a running replica unschedulable.
      GetUnschedulableReplicas: respond(() => ({ unschedulableReplicas: 0 })),
    });
    const target = `${this.options.host}:${this.options.port}`;
    await new Promise<void>((resolve, reject) =>
      this.server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err) =>
        err
          ? reject(
              new Error(
                `cannot serve the scheduler-estimator API on ${target}: ${err.message} ` +
                  '(is SCHEDULER_ESTIMATOR_PORT free?)',
              ),
            )
          : resolve(),
      ),
    );
    this.logger.log(
      `serving Karmada's scheduler-estimator API on ${target} (plaintext gRPC)` +
        (this.options.forwardTo ? `, asking Karmada's own estimators at ${this.options.forwardTo} too` : ''),
    );
  }

  /** Calls Karmada's own estimator of a member (plaintext, one cached connection per member). */
  private forwarder(template: string, method: grpc.MethodDefinition<object, object>): Forward {
    return (member, raw, metadata) => {
      let client = this.clients.get(member);
      if (client === undefined) {
        client = new grpc.Client(template.replaceAll('{member}', member), grpc.credentials.createInsecure());
        this.clients.set(member, client);
      }
      const forwarded = new grpc.Metadata();
      for (const value of metadata.get('object')) forwarded.add('object', value);
      return new Promise<number>((resolve, reject) =>
        client.makeUnaryRequest(
          method.path,
          (raw: Buffer) => raw,
          method.responseDeserialize as (bytes: Buffer) => { maxReplicas?: number },
          raw,
          forwarded,
          { deadline: Date.now() + FORWARD_TIMEOUT_MS },
          (err: grpc.ServiceError | null, reply?: { maxReplicas?: number }) =>
            err ? reject(err) : resolve(reply?.maxReplicas ?? NO_ESTIMATE),
        ),
      );
    };
  }

  async onModuleDestroy(): Promise<void> {
    for (const client of this.clients.values()) client.close();
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }
}
