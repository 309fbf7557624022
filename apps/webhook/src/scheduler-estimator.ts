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

type Answer = 'room' | 'no-opinion';

export class SchedulerEstimator implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('scheduler-estimator');
  private readonly server = new grpc.Server();
  private readonly answers: Counter<'answer'>;

  constructor(
    private readonly quotas: WatchedQuotaStore,
    private readonly address: { host: string; port: number },
    registry: Registry,
  ) {
    this.answers = new Counter({
      name: 'karmada_quota_estimator_answers_total',
      help: "Answers to karmada-scheduler's MaxAvailableReplicas: room under the member caps, or no opinion",
      labelNames: ['answer'],
      registers: [registry],
    });
  }

  /** How many more replicas fit on the member under the caps; NO_ESTIMATE on any doubt. */
  answer(request: WireReplicasRequest, object: string | undefined): number {
    const question = decodeReplicasQuestion(request, object);
    const quotas = question && this.quotas.watchedIn(question.namespace);
    const room =
      question && quotas
        ? replicasRoomOn(question.member, perReplicaCharge(question.requests), quotas)
        : NO_ESTIMATE;
    this.answers.inc({ answer: (room === NO_ESTIMATE ? 'no-opinion' : 'room') satisfies Answer });
    return room;
  }

  async onApplicationBootstrap(): Promise<void> {
    const definition = protoLoader.loadSync(estimatorProtoFile(), { keepCase: true, defaults: true });
    const service = grpc.loadPackageDefinition(definition);
    const estimator = SERVICE.split('.').reduce<unknown>(
      (node, part) => (node as Record<string, unknown>)[part],
      service,
    ) as grpc.ServiceClientConstructor;
    const respond =
      <T>(answer: (call: grpc.ServerUnaryCall<unknown, T>) => T) =>
      (call: grpc.ServerUnaryCall<unknown, T>, callback: grpc.sendUnaryData<T>) => {
        try {
          callback(null, answer(call));
        } catch (err) {
          // Never an error to Karmada (see the file comment): no opinion instead.
          this.logger.warn(
            { error: describeError(err) },
            'could not answer karmada-scheduler; answered no opinion',
          );
          callback(null, { maxReplicas: NO_ESTIMATE, maxSets: NO_ESTIMATE, unschedulableReplicas: 0 } as T);
        }
      };
    this.server.addService(estimator.service, {
      MaxAvailableReplicas: respond((call) => ({
        maxReplicas: this.answer(
          call.request as WireReplicasRequest,
          call.metadata.get('object')[0]?.toString(),
        ),
      })),
      // Multi-component workloads (an alpha Karmada gate): no opinion; the webhook still checks them.
      MaxAvailableComponentSets: respond(() => ({ maxSets: NO_ESTIMATE })),
      // Asked by the descheduler only: quota never makes a running replica unschedulable.
      GetUnschedulableReplicas: respond(() => ({ unschedulableReplicas: 0 })),
    });
    const target = `${this.address.host}:${this.address.port}`;
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
    this.logger.log(`serving Karmada's scheduler-estimator API on ${target} (plaintext gRPC)`);
  }

  async onModuleDestroy(): Promise<void> {
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }
}
