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
import type { BindingOverrides } from '#service-kit';
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
  /** The workload, from the `object` metadata; undefined without it. */
  workload?: { kind: string; name: string };
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
  const named = /(?:^|[\s,])name=([^/,\s]+)\/([^,\s]+)/.exec(object ?? '');
  const kind = /(?:^|[\s,])kind=([^,\s]+)/.exec(object ?? '')?.[1];
  const namespace = named?.[1] ?? request.replicaRequirements?.namespace;
  if (member === '' || !namespace) return undefined;
  const workload = named && kind ? { workload: { kind, name: named[2]! } } : {};
  const requirements = request.replicaRequirements;
  const wire =
    requirements?.resourceRequestBytes && Object.keys(requirements.resourceRequestBytes).length > 0
      ? requirements.resourceRequestBytes
      : (requirements?.resourceRequest ?? {});
  const raw = Object.fromEntries(Object.entries(wire).map(([name, q]) => [name, q?.string ?? '']));
  const { list, errors } = parseResourceList(raw, 'replicaRequirements.resourceRequest');
  return errors.length > 0 ? undefined : { member, namespace, requests: list, ...workload };
}

/** The smaller of two estimates, NO_ESTIMATE being no opinion. */
export function lowerEstimate(a: number, b: number): number {
  if (a === NO_ESTIMATE) return b;
  if (b === NO_ESTIMATE) return a;
  return Math.min(a, b);
}

/**
 * How long a call forwarded to Karmada's own estimator may take: karmada-scheduler gives all its
 * estimator calls for a binding 3 s (`--scheduler-estimator-timeout`), and an answer past the
 * caller's deadline is dropped with ours, so the forward ends this much before it at the latest.
 */
const FORWARD_TIMEOUT_MS = 1_500;
const FORWARD_MARGIN_MS = 200;

/** A request as it came, and as decoded: the bytes are what is forwarded. */
interface KeptCall {
  raw: Buffer;
  request: WireReplicasRequest;
}

/** The three methods and what each answers when neither we nor Karmada's own estimator can. */
const METHODS = {
  MaxAvailableReplicas: { field: 'maxReplicas', unanswered: NO_ESTIMATE },
  // Multi-component workloads (an alpha Karmada gate): no opinion of ours; the webhook checks them.
  MaxAvailableComponentSets: { field: 'maxSets', unanswered: NO_ESTIMATE },
  // Asked by the descheduler only: quota never makes a running replica unschedulable.
  GetUnschedulableReplicas: { field: 'unschedulableReplicas', unanswered: 0 },
} as const;
type Method = keyof typeof METHODS;

type Forward = (
  method: Method,
  member: string,
  call: grpc.ServerUnaryCall<KeptCall, unknown>,
) => Promise<number>;

export class SchedulerEstimator implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('scheduler-estimator');
  private readonly server = new grpc.Server();
  private readonly answers: Counter<'answer'>;
  private readonly forwards: Counter<'method' | 'result'>;
  private readonly clients = new Map<string, grpc.Client>();
  private forward?: Forward;

  constructor(
    private readonly quotas: WatchedQuotaStore,
    private readonly overrides: BindingOverrides,
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
      help: "Calls passed on to Karmada's own estimator of the member, by method and result",
      labelNames: ['method', 'result'],
      registers: [registry],
    });
  }

  /**
   * How many more replicas fit on the member under the caps; NO_ESTIMATE on any doubt, and for a
   * workload an OverridePolicy may change: the charge on a member is then what the override makes it
   * run there (docs/concepts/binding-cost.md), which the request does not say.
   */
  answer(request: WireReplicasRequest, object: string | undefined): number {
    const question = decodeReplicasQuestion(request, object);
    if (question === undefined || question.workload === undefined) return NO_ESTIMATE;
    const { kind, name } = question.workload;
    if (this.overrides.mayChangeWorkload(question.namespace, kind, name)) return NO_ESTIMATE;
    const quotas = this.quotas.watchedIn(question.namespace);
    return quotas
      ? replicasRoomOn(question.member, perReplicaCharge(question.requests), quotas, question.namespace)
      : NO_ESTIMATE;
  }

  /**
   * The answer to a call: for MaxAvailableReplicas ours, and with SCHEDULER_ESTIMATOR_FORWARD_TO the
   * lower of ours and what Karmada's own estimator of the member says (it knows the member's nodes);
   * for the other two methods, that estimator's answer. Its failure leaves ours (or the method's
   * no-answer value): it would have dropped every answer for the binding, had Karmada asked it directly.
   */
  private async answerCall(method: Method, call: grpc.ServerUnaryCall<KeptCall, unknown>): Promise<number> {
    const { request } = call.request;
    let answer =
      method === 'MaxAvailableReplicas'
        ? this.answer(request, call.metadata.get('object')[0]?.toString())
        : METHODS[method].unanswered;
    if (this.forward && request.cluster) {
      try {
        const theirs = await this.forward(method, request.cluster, call);
        answer = method === 'MaxAvailableReplicas' ? lowerEstimate(answer, theirs) : theirs;
        this.forwards.inc({ method, result: 'answered' });
      } catch (err) {
        this.forwards.inc({ method, result: 'failed' });
        this.logger.warn(
          { member: request.cluster, method, error: describeError(err) },
          `Karmada's own estimator of member ${request.cluster} did not answer ${method}; answered without it`,
        );
      }
    }
    if (method === 'MaxAvailableReplicas')
      this.answers.inc({ answer: answer === NO_ESTIMATE ? 'no-opinion' : 'room' });
    return answer;
  }

  async onApplicationBootstrap(): Promise<void> {
    const definition = protoLoader.loadSync(estimatorProtoFile(), { keepCase: true, defaults: true });
    const service = grpc.loadPackageDefinition(definition);
    const estimator = SERVICE.split('.').reduce<unknown>(
      (node, part) => (node as Record<string, unknown>)[part],
      service,
    ) as grpc.ServiceClientConstructor;
    const methods = estimator.service;
    // Each request's bytes are kept beside its decoding: forwarded as they came, with the fields this
    // trimmed API leaves out (node selectors, tolerations) that Karmada's own estimator reads.
    const keepingBytes: grpc.ServiceDefinition = Object.fromEntries(
      Object.entries(methods).map(([name, method]) => [
        name,
        {
          ...method,
          requestDeserialize: (raw: Buffer): KeptCall => ({
            raw,
            request: method.requestDeserialize(raw) as WireReplicasRequest,
          }),
        },
      ]),
    );
    if (this.options.forwardTo) this.forward = this.forwarder(this.options.forwardTo, methods);
    const handlers = Object.fromEntries(
      (Object.keys(METHODS) as Method[]).map((method) => {
        const { field, unanswered } = METHODS[method];
        const handler = (
          call: grpc.ServerUnaryCall<KeptCall, unknown>,
          callback: grpc.sendUnaryData<unknown>,
        ) =>
          void this.answerCall(method, call).then(
            (answer) => callback(null, { [field]: answer }),
            (err: unknown) => {
              // Never an error to Karmada (see the file comment): no opinion instead.
              this.logger.warn({ method, error: describeError(err) }, 'could not answer karmada-scheduler');
              callback(null, { [field]: unanswered });
            },
          );
        return [method, handler];
      }),
    );
    this.server.addService(keepingBytes, handlers);
    const host = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host;
    const target = `${host}:${this.options.port}`;
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
  private forwarder(template: string, methods: grpc.ServiceDefinition): Forward {
    return (method, member, call) => {
      let client = this.clients.get(member);
      if (client === undefined) {
        client = new grpc.Client(template.replaceAll('{member}', member), grpc.credentials.createInsecure());
        this.clients.set(member, client);
      }
      const forwarded = new grpc.Metadata();
      for (const value of call.metadata.get('object')) forwarded.add('object', value);
      const callerDeadline = call.getDeadline();
      const deadline = Math.min(
        Date.now() + FORWARD_TIMEOUT_MS,
        callerDeadline instanceof Date || typeof callerDeadline === 'number'
          ? Number(callerDeadline) - FORWARD_MARGIN_MS
          : Infinity,
      );
      const definition = methods[method]!;
      const { field } = METHODS[method];
      return new Promise<number>((resolve, reject) =>
        client.makeUnaryRequest(
          definition.path,
          (raw: Buffer) => raw,
          definition.responseDeserialize as (bytes: Buffer) => Record<string, number | undefined>,
          call.request.raw,
          forwarded,
          { deadline },
          (err: grpc.ServiceError | null, reply?: Record<string, number | undefined>) =>
            err ? reject(err) : resolve(reply?.[field] ?? METHODS[method].unanswered),
        ),
      );
    };
  }

  async onModuleDestroy(): Promise<void> {
    for (const client of this.clients.values()) client.close();
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }
}
