import { Agent, request } from 'node:https';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ResourceBinding } from '#api';
import type { ClientCertificate } from '../../../tools/federation/src/index.js';

/** The webhook's answer to one POST: status 0 when the connection failed (`error` says how). */
export interface WebhookReply {
  status: number;
  body: string;
  error?: string;
}

/** The webhook as a direct caller sees it: a started service carries the certificate it accepts. */
export interface WebhookTarget {
  url: string;
  clientCertificate?: Pick<ClientCertificate, 'certFile' | 'keyFile'>;
}

/** The TLS options that present `webhook`'s client certificate, when it has one. */
function clientTls(webhook: WebhookTarget): { cert?: string; key?: string } {
  const client = webhook.clientCertificate;
  return client
    ? { cert: readFileSync(client.certFile, 'utf8'), key: readFileSync(client.keyFile, 'utf8') }
    : {};
}

/**
 * POSTs a body to the webhook's `path` as the API server does (HTTPS, presenting the client
 * certificate the webhook accepts; its serving certificate is from a throwaway CA, not verified
 * here). Never rejects: a refused or reset connection is a reply with status 0.
 */
export function postToWebhook(
  webhook: WebhookTarget,
  path: string,
  body: string | Buffer,
  options: { agent?: Agent; contentType?: string; timeoutMs?: number } = {},
): Promise<WebhookReply> {
  return new Promise((resolve) => {
    const req = request(
      `${webhook.url}${path}`,
      {
        method: 'POST',
        agent: options.agent,
        ...clientTls(webhook),
        rejectUnauthorized: false,
        timeout: options.timeoutMs ?? 30_000,
        headers: { 'content-type': options.contentType ?? 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', (err) => resolve({ status: 0, body: '', error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in time')));
    req.on('error', (err) => resolve({ status: 0, body: '', error: err.message }));
    req.end(body);
  });
}

/**
 * Sends an oversized body to the webhook: with its length declared up front only the first 64 KiB
 * are sent (the declared length alone must be refused, before the body is read); chunked (length
 * undeclared) it streams 64 KiB chunks until the webhook answers or `bytes` were sent.
 */
export function postOversized(
  webhook: WebhookTarget,
  path: string,
  bytes: number,
  declareLength: boolean,
): Promise<WebhookReply> {
  return new Promise((resolve) => {
    let answered = false;
    const req = request(
      `${webhook.url}${path}`,
      {
        method: 'POST',
        ...clientTls(webhook),
        rejectUnauthorized: false,
        timeout: 60_000,
        headers: {
          'content-type': 'application/json',
          ...(declareLength ? { 'content-length': bytes } : {}),
        },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
          req.destroy();
        });
      },
    );
    req.on('error', (err) => {
      if (!answered) resolve({ status: 0, body: '', error: err.message });
    });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    if (declareLength) return void req.write(chunk);
    const pump = () => {
      while (!answered && sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** An AdmissionReview v1 for a ResourceBinding, as the host API server sends it. */
export function bindingReview(
  operation: 'CREATE' | 'UPDATE',
  object: ResourceBinding,
  options: { uid?: string; oldObject?: ResourceBinding; dryRun?: boolean } = {},
): object {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: options.uid ?? randomUUID(),
      kind: { group: 'work.karmada.io', version: 'v1alpha2', kind: 'ResourceBinding' },
      resource: { group: 'work.karmada.io', version: 'v1alpha2', resource: 'resourcebindings' },
      requestKind: { group: 'work.karmada.io', version: 'v1alpha2', kind: 'ResourceBinding' },
      requestResource: { group: 'work.karmada.io', version: 'v1alpha2', resource: 'resourcebindings' },
      name: object.metadata?.name,
      namespace: object.metadata?.namespace,
      operation,
      userInfo: { username: 'system:admin', groups: ['system:masters'] },
      object,
      ...(options.oldObject ? { oldObject: options.oldObject } : {}),
      dryRun: options.dryRun ?? false,
      options: {
        apiVersion: 'meta.k8s.io/v1',
        kind: operation === 'CREATE' ? 'CreateOptions' : 'UpdateOptions',
      },
    },
  };
}

/** The `response` of a reply that is a well-formed AdmissionReview, else undefined. */
export function admissionResponse(
  reply: WebhookReply,
): { uid: string; allowed: boolean; status?: { code: number; message: string } } | undefined {
  if (reply.status !== 200) return undefined;
  try {
    const review = JSON.parse(reply.body) as {
      apiVersion?: unknown;
      kind?: unknown;
      response?: { uid?: unknown; allowed?: unknown; status?: { code?: unknown; message?: unknown } };
    };
    const response = review.response;
    if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview' || !response)
      return undefined;
    if (typeof response.uid !== 'string' || typeof response.allowed !== 'boolean') return undefined;
    if (!response.allowed) {
      const status = response.status;
      if (typeof status?.code !== 'number' || typeof status.message !== 'string') return undefined;
    }
    return response as { uid: string; allowed: boolean; status?: { code: number; message: string } };
  } catch {
    return undefined;
  }
}
