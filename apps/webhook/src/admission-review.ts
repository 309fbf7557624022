import { isJsonObject } from '#api';

/** The parts of an admission.k8s.io/v1 AdmissionReview request the webhook reads. */
export interface AdmissionRequest {
  uid: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  kind: { group: string; version: string; kind: string };
  namespace?: string;
  name?: string;
  object?: unknown;
  oldObject?: unknown;
  dryRun: boolean;
  /** Who makes the request, as the API server authenticated them. */
  userInfo: UserInfo;
}

/** An authenticated user (request.userInfo), as a SubjectAccessReview asks about them. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra: Record<string, string[]>;
}

export interface AdmissionStatus {
  code: number;
  reason?: string;
  message: string;
}

export interface AdmissionReviewResponse {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  /** `warnings`: shown to the client that made the request (kubectl prints `Warning: ...`). */
  response: { uid: string; allowed: boolean; status?: AdmissionStatus; warnings?: string[] };
}

/** A body that is not an AdmissionReview we can answer: the HTTP reply is 400 with this message. */
export class BadAdmissionReview extends Error {
  override name = 'BadAdmissionReview';
}

/** Checks the envelope of an AdmissionReview v1; the object inside is checked by the caller. */
export function parseAdmissionReview(body: unknown): AdmissionRequest {
  if (!isJsonObject(body)) throw new BadAdmissionReview('the request body is not a JSON object');
  if (body.kind !== 'AdmissionReview' || body.apiVersion !== 'admission.k8s.io/v1') {
    throw new BadAdmissionReview(
      `expected an admission.k8s.io/v1 AdmissionReview, got apiVersion=${JSON.stringify(body.apiVersion)} kind=${JSON.stringify(body.kind)}`,
    );
  }
  const request = body.request;
  if (!isJsonObject(request)) throw new BadAdmissionReview('the AdmissionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '')
    throw new BadAdmissionReview('request.uid is missing');
  if (!['CREATE', 'UPDATE', 'DELETE', 'CONNECT'].includes(request.operation as string)) {
    throw new BadAdmissionReview(
      `request.operation ${JSON.stringify(request.operation)} is not an admission operation`,
    );
  }
  const kind = request.kind;
  if (!isJsonObject(kind) || typeof kind.kind !== 'string' || typeof kind.group !== 'string') {
    throw new BadAdmissionReview('request.kind is missing or malformed');
  }
  return {
    uid: request.uid,
    operation: request.operation as AdmissionRequest['operation'],
    kind: { group: kind.group, version: String(kind.version ?? ''), kind: kind.kind },
    namespace: typeof request.namespace === 'string' ? request.namespace : undefined,
    name: typeof request.name === 'string' ? request.name : undefined,
    object: request.object ?? undefined,
    oldObject: request.oldObject ?? undefined,
    dryRun: request.dryRun === true,
    userInfo: parseUserInfo(request.userInfo),
  };
}

/** request.userInfo, leaving out what is not a string (an API server always sends it well-formed). */
function parseUserInfo(raw: unknown): UserInfo {
  const info = isJsonObject(raw) ? raw : {};
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  const extra = isJsonObject(info.extra) ? info.extra : {};
  return {
    username: typeof info.username === 'string' ? info.username : '',
    ...(typeof info.uid === 'string' && info.uid !== '' ? { uid: info.uid } : {}),
    groups: strings(info.groups),
    extra: Object.fromEntries(Object.entries(extra).map(([key, values]) => [key, strings(values)])),
  };
}

export function admissionResponse(
  uid: string,
  allowed: boolean,
  status?: AdmissionStatus,
): AdmissionReviewResponse {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: status ? { uid, allowed, status } : { uid, allowed },
  };
}

/** An admission with warnings for the client; none makes it a plain admission. */
export function admittedWithWarnings(uid: string, warnings: readonly string[]): AdmissionReviewResponse {
  const review = admissionResponse(uid, true);
  if (warnings.length > 0) review.response.warnings = [...warnings];
  return review;
}
