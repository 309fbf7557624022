import { BadRequestException, Body, Controller, HttpCode, Inject, Logger, Post } from '@nestjs/common';
import {
  CLUSTER_KARMADA_QUOTA,
  describeError,
  FEDERATED_RESOURCE_QUOTA,
  isJsonObject,
  KARMADA_QUOTA,
  RESOURCE_BINDING,
  type FederatedResourceQuota,
  type ResourceBinding,
} from '#api';
import {
  bindingCharge,
  enforcementWarning,
  frqLimitChange,
  frqLimitChangeNeeds,
  templateClassNeeded,
  validateClusterKarmadaQuota,
  validateKarmadaQuota,
} from '#quota';
import { describeFieldError, type FieldError } from '#quantity';
import {
  asksNothing,
  bindingChange,
  failClosed,
  uidProblem,
  type AdmissionOutcome,
  type AdmissionStrategy,
} from '#accounting';
import {
  admissionResponse,
  admittedWithWarnings,
  BadAdmissionReview,
  parseAdmissionReview,
  type AdmissionRequest,
  type AdmissionReviewResponse,
} from './admission-review.js';
import { kindProblem, type GroupVersionKind } from './admission-kind.js';
import type { WebhookConfig } from './config.js';
import { DenialEventRecorder } from './denial-events.js';
import { StoredBindings } from './stored-bindings.js';
import { BindingOverrides, OverridesUnknown, TemplateClasses, TemplateClassUnreadable } from '#service-kit';
import { WatchedQuotaStore } from './watched-quota-store.js';
import { TemplateWarnings } from './template-warnings.js';
import { QuotaAdminRight } from './quota-admin-right.js';
import { WaitingRecorder } from './waiting-recorder.js';
import { WebhookMetrics, type AdmissionResult } from './webhook-metrics.js';

export const WEBHOOK_CONFIG = Symbol('WEBHOOK_CONFIG');
/** What a CREATE of a name already stored is answered with (409), instead of an admission. */
const ALREADY_STORED = Symbol('ALREADY_STORED');
/** The AdmissionStrategy that ADMISSION_MODE selects. */
export const ADMISSION_STRATEGY = Symbol('ADMISSION_STRATEGY');

@Controller('validate')
export class AdmissionController {
  private readonly logger = new Logger('admission');

  constructor(
    @Inject(ADMISSION_STRATEGY) private readonly admission: AdmissionStrategy,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
    private readonly metrics: WebhookMetrics,
    private readonly denials: DenialEventRecorder,
    private readonly waiting: WaitingRecorder,
    private readonly stored: StoredBindings,
    private readonly templateWarnings: TemplateWarnings,
    private readonly templateClasses: TemplateClasses,
    private readonly overrides: BindingOverrides,
    private readonly quotas: WatchedQuotaStore,
    private readonly quotaAdmin: QuotaAdminRight,
  ) {}

  @Post('resourcebindings')
  @HttpCode(200)
  async resourceBinding(@Body() body: unknown): Promise<AdmissionReviewResponse> {
    return this.measured('resourcebindings', () => this.admitBinding(body));
  }

  /**
   * A workload (resource template) applied: always admitted, with a warning per Warn quota that will
   * refuse its binding (template-warnings.ts). Registered with failurePolicy Ignore.
   */
  @Post('templates')
  @HttpCode(200)
  template(@Body() body: unknown): Promise<AdmissionReviewResponse> {
    return this.measured('templates', () => this.warnTemplate(body));
  }

  @Post('karmadaquotas')
  @HttpCode(200)
  karmadaQuota(@Body() body: unknown): Promise<AdmissionReviewResponse> {
    return this.measured('karmadaquotas', async () =>
      this.validateQuota(body, KARMADA_QUOTA, validateKarmadaQuota),
    );
  }

  @Post('clusterkarmadaquotas')
  @HttpCode(200)
  clusterKarmadaQuota(@Body() body: unknown): Promise<AdmissionReviewResponse> {
    return this.measured('clusterkarmadaquotas', async () =>
      this.validateQuota(body, CLUSTER_KARMADA_QUOTA, validateClusterKarmadaQuota),
    );
  }

  /**
   * A FederatedResourceQuota written while the reconciler serves FRQs (registered only then): a
   * change of the team's limit or its enforcement is admitted only for a user who may update the
   * namespace's KarmadaQuotas; any other change passes.
   */
  @Post('federatedresourcequotas')
  @HttpCode(200)
  federatedResourceQuota(@Body() body: unknown): Promise<AdmissionReviewResponse> {
    return this.measured('federatedresourcequotas', () => this.guardFrqLimit(body));
  }

  private async measured(
    resource: string,
    answer: () => Promise<AdmissionReviewResponse>,
  ): Promise<AdmissionReviewResponse> {
    const startedAt = process.hrtime.bigint();
    const review = await answer();
    const { allowed, status } = review.response;
    const result: AdmissionResult = allowed
      ? 'allowed'
      : status?.code === 403
        ? 'denied'
        : status?.code === 503
          ? 'unavailable'
          : status?.code === 409
            ? 'exists'
            : 'invalid';
    this.metrics.admitted(resource, result, startedAt);
    return review;
  }

  private async admitBinding(body: unknown): Promise<AdmissionReviewResponse> {
    const request = this.parse(body);
    const answer = this.unlessWrite(request, RESOURCE_BINDING);
    if (answer) return answer;
    const binding = request.object;
    const name = isJsonObject(binding) && isJsonObject(binding.metadata) ? binding.metadata.name : undefined;
    const namespace =
      request.namespace ??
      (isJsonObject(binding) && isJsonObject(binding.metadata) ? binding.metadata.namespace : undefined);
    if (
      !isJsonObject(binding) ||
      !isJsonObject(binding.spec) ||
      typeof name !== 'string' ||
      !name ||
      typeof namespace !== 'string'
    ) {
      return this.invalid(request, 'the ResourceBinding has no metadata.name, metadata.namespace or spec');
    }
    const rb = binding as unknown as ResourceBinding;
    const { charge, errors } = bindingCharge(rb);
    if (errors.length > 0)
      return this.invalid(request, `ResourceBinding ${namespace}/${name} is invalid: ${errors.join('; ')}`);
    const oldObject =
      request.operation === 'UPDATE' && isJsonObject(request.oldObject)
        ? (request.oldObject as unknown as ResourceBinding)
        : undefined;
    const wrongUid = oldObject && uidProblem(rb, oldObject);
    if (wrongUid)
      return this.invalid(request, `ResourceBinding ${namespace}/${name} is invalid: ${wrongUid}`);
    const key = { namespace, name };
    const unscoped = bindingChange(key, rb, charge, request.dryRun, oldObject);
    const needsTemplates = [rb, oldObject].some(
      (b) => b && (templateClassNeeded(b) || this.overrides.mayChange(b)),
    );
    if (!needsTemplates && asksNothing(unscoped))
      return this.answered(request, key, rb, oldObject, { allowed: true });
    // A create of a stored name fails with AlreadyExists after admission: refused here, it claims
    // nothing (Karmada's detector retries its creates; a claim for one would hold quota until it
    // expires). Its read, and the templates' priority classes, are Karmada API server calls of the
    // review like the others: inside the review's deadline.
    // The objects as judged (classes, overrides): a refusal's waiting record needs their charge.
    let judgedObject = rb;
    let judgedOld = oldObject;
    const outcome = await this.withDeadline(async (answerBy) => {
      let change = unscoped;
      if (needsTemplates) {
        const judged = await this.judged(namespace, rb, oldObject, answerBy);
        if (!('object' in judged)) return judged;
        ({ object: judgedObject, old: judgedOld } = judged);
        // Most often no class or override applies: the objects come back as they were, charged already.
        if (judgedObject !== rb || judgedOld !== oldObject)
          change = bindingChange(
            key,
            judgedObject,
            bindingCharge(judgedObject).charge,
            request.dryRun,
            judgedOld,
          );
        if (asksNothing(change)) return { allowed: true };
      }
      return request.operation === 'CREATE' &&
        (await this.stored.exists(namespace, name, { deadline: answerBy }))
        ? ALREADY_STORED
        : this.admission.admit(change, answerBy);
    });
    if (outcome === ALREADY_STORED)
      return admissionResponse(request.uid, false, {
        code: 409,
        reason: 'AlreadyExists',
        message: `resourcebindings.${RESOURCE_BINDING.group} "${name}" already exists`,
      });
    return this.answered(request, key, judgedObject, judgedOld, outcome);
  }

  /**
   * The binding and its old object as PriorityClass scopes and the charge judge them: with Karmada's
   * default gates the class is read from the template (libs/service-kit template-classes.ts), when a
   * quota of the namespace selects by class; and what OverridePolicies make each target cluster run
   * (binding-overrides.ts). What cannot be read fails the review closed.
   */
  private async judged(
    namespace: string,
    object: ResourceBinding,
    old: ResourceBinding | undefined,
    answerBy: number,
  ): Promise<{ object: ResourceBinding; old?: ResourceBinding } | AdmissionOutcome> {
    try {
      // Every quota selecting the namespace as watched, ClusterKarmadaQuotas included (a quota the watch
      // has not seen yet was just created: its usage is not counted, so it refuses every increase
      // anyway); a read when a watch is down or has not seen the namespace yet.
      const quotas =
        this.quotas.watchedIn(namespace) ?? (await this.quotas.list(namespace, { deadline: answerBy }));
      const classified = await this.templateClasses.classify([object, old], quotas, { deadline: answerBy });
      const [judgedObject, judgedOld] = await this.overrides.apply(classified, { deadline: answerBy });
      return { object: judgedObject!, ...(judgedOld ? { old: judgedOld } : {}) };
    } catch (err) {
      const explained = err instanceof TemplateClassUnreadable || err instanceof OverridesUnknown;
      return failClosed(explained ? err.message : describeError(err));
    }
  }

  /**
   * Records the outcome (denial Events, waiting changes; for a Warn or DryRun quota's refusal an Event
   * and a metric) and answers it, with a warning per Warn quota that would have refused it.
   */
  private answered(
    request: AdmissionRequest,
    { namespace, name }: { namespace: string; name: string },
    rb: ResourceBinding,
    oldObject: ResourceBinding | undefined,
    outcome: AdmissionOutcome,
  ): AdmissionReviewResponse {
    if (!request.dryRun) {
      if (outcome.allowed) {
        this.waiting.admitted(namespace, rb, oldObject);
        for (const { quota, enforcement, message } of outcome.notEnforced ?? []) {
          this.denials.record(namespace, quota, name, message, enforcement);
          this.metrics.notEnforced(namespace, quota, enforcement);
        }
      } else if ('quota' in outcome) {
        this.denials.record(namespace, outcome.quota, name, outcome.message);
        this.waiting.refused(namespace, rb, oldObject, outcome);
      }
    }
    return this.respond(request, outcome);
  }

  private async warnTemplate(body: unknown): Promise<AdmissionReviewResponse> {
    const request = this.parse(body);
    const namespace = request.namespace;
    if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || !namespace)
      return admissionResponse(request.uid, true);
    try {
      const answerBy = Date.now() + this.config.ADMISSION_DEADLINE_MS;
      const warnings = await this.templateWarnings.warnings(namespace, request.object, {
        deadline: answerBy,
      });
      return admittedWithWarnings(request.uid, warnings);
    } catch (err) {
      // Only a warning was lost: the binding's own admission still decides.
      this.logger.warn(
        { ...requestFields(request), error: describeError(err) },
        'could not check the workload against Warn quotas',
      );
      return admissionResponse(request.uid, true);
    }
  }

  /** A write of a KarmadaQuota or ClusterKarmadaQuota (`kind`): refused (422) with `validate`'s errors. */
  private validateQuota(
    body: unknown,
    kind: typeof KARMADA_QUOTA | typeof CLUSTER_KARMADA_QUOTA,
    validate: (obj: unknown, old?: unknown) => FieldError[],
  ): AdmissionReviewResponse {
    const request = this.parse(body);
    const answer = this.unlessWrite(request, kind);
    if (answer) return answer;
    const errors = validate(request.object, request.operation === 'UPDATE' ? request.oldObject : undefined);
    if (errors.length === 0) return admissionResponse(request.uid, true);
    const details = errors.map(describeFieldError).join('; ');
    return this.invalid(request, `${kind.kind}.${kind.group} "${request.name ?? ''}" is invalid: ${details}`);
  }

  private async guardFrqLimit(body: unknown): Promise<AdmissionReviewResponse> {
    const request = this.parse(body);
    const answer = this.unlessWrite(request, FEDERATED_RESOURCE_QUOTA);
    if (answer) return answer;
    // The API server checked them against the FRQ CRD's schema: fields are read as typed.
    const frqOf = (value: unknown) =>
      isJsonObject(value) ? (value as unknown as FederatedResourceQuota) : undefined;
    const frq = frqOf(request.object);
    const old = request.operation === 'UPDATE' ? frqOf(request.oldObject) : undefined;
    const namespace = request.namespace ?? frq?.metadata?.namespace;
    if (!frq || (request.operation === 'UPDATE' && !old) || !namespace)
      return this.invalid(
        request,
        `the review of a FederatedResourceQuota ${request.operation} carries no namespace, object or old object`,
        400,
      );
    const change = frqLimitChange(frq, old);
    if (!change) return admissionResponse(request.uid, true);
    const needs = frqLimitChangeNeeds(namespace, request.name ?? frq.metadata?.name ?? '', change);
    const user = JSON.stringify(request.userInfo.username);
    try {
      const deadline = Date.now() + this.config.ADMISSION_DEADLINE_MS;
      if (await this.quotaAdmin.heldBy(request.userInfo, namespace, deadline))
        return admissionResponse(request.uid, true);
    } catch (err) {
      const message =
        `${needs}, and whether user ${user} holds it could not be checked (SubjectAccessReview: ` +
        `${describeError(err)}), so the write is not admitted (fail closed). Retry; if it persists, ` +
        'check that the webhook may create subjectaccessreviews.authorization.k8s.io, and its logs';
      this.logger.error({ ...requestFields(request), error: message }, 'failed closed (503)');
      return admissionResponse(request.uid, false, { code: 503, reason: 'ServiceUnavailable', message });
    }
    const message = `${needs}, which user ${user} lacks`;
    this.logger.warn({ ...requestFields(request), error: message }, "refused a change of a team's limit");
    return admissionResponse(request.uid, false, { code: 403, reason: 'Forbidden', message });
  }

  private parse(body: unknown): AdmissionRequest {
    try {
      return parseAdmissionReview(body);
    } catch (err) {
      if (err instanceof BadAdmissionReview) {
        this.logger.warn({ error: err.message }, 'bad AdmissionReview');
        throw new BadRequestException(err.message);
      }
      throw err;
    }
  }

  /**
   * The answer to a request other than a CREATE or UPDATE of `expected`: a refusal of another kind or
   * version (400), an admission of anything else (a DELETE, a CONNECT); none for a write to judge.
   */
  private unlessWrite(
    request: AdmissionRequest,
    expected: GroupVersionKind,
  ): AdmissionReviewResponse | undefined {
    const problem = kindProblem(request.kind, expected);
    if (problem !== undefined) return this.invalid(request, problem, 400);
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE')
      return admissionResponse(request.uid, true);
    return undefined;
  }

  private invalid(request: AdmissionRequest, message: string, code = 422): AdmissionReviewResponse {
    this.logger.warn({ ...requestFields(request), error: message }, 'denied an invalid request');
    return admissionResponse(request.uid, false, {
      code,
      reason: code === 400 ? 'BadRequest' : 'Invalid',
      message,
    });
  }

  private respond(request: AdmissionRequest, outcome: AdmissionOutcome): AdmissionReviewResponse {
    if (outcome.allowed) {
      const warned = (outcome.notEnforced ?? []).filter((n) => n.enforcement === 'Warn');
      return admittedWithWarnings(
        request.uid,
        warned.map((n) => enforcementWarning(n.quota, n.message)),
      );
    }
    if ('unavailable' in outcome) {
      this.logger.error({ ...requestFields(request), error: outcome.message }, 'failed closed (503)');
      return admissionResponse(request.uid, false, {
        code: 503,
        reason: 'ServiceUnavailable',
        message: outcome.message,
      });
    }
    const reason = outcome.exceeded.length > 0 ? 'QuotaExceeded' : 'Forbidden';
    return admissionResponse(request.uid, false, { code: 403, reason, message: outcome.message });
  }

  /**
   * The API server waits at most timeoutSeconds: answer first, failing closed with our own message.
   * Every Karmada API server call of the review is given `answerBy`.
   */
  private withDeadline<T>(
    admit: (answerBy: number) => Promise<T | AdmissionOutcome>,
  ): Promise<T | AdmissionOutcome> {
    const ms = this.config.ADMISSION_DEADLINE_MS;
    const outcome = admit(Date.now() + ms);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<AdmissionOutcome>((resolve) => {
      timer = setTimeout(
        () => resolve(failClosed(`the Karmada API server did not answer within ${ms} ms`)),
        ms,
      );
    });
    return Promise.race([outcome, deadline]).finally(() => clearTimeout(timer));
  }
}

/** What a log line says of an AdmissionReview: its uid and the object it is about. */
function requestFields(request: AdmissionRequest) {
  return { uid: request.uid, kind: request.kind.kind, namespace: request.namespace, name: request.name };
}
