/**
 * Forwarding to the admission owner (ADMISSION_MODE=owner; docs/concepts/admission-owner.md): a webhook
 * process that does not hold the admission Lease posts each change that asks something of a quota to
 * the holder's peer port, and answers with the holder's decision, or fails closed when the holder
 * cannot be reached in time. Peers speak mutual TLS with the webhook's own certificate: a peer is one
 * presenting a certificate from ADMISSION_PEER_CA_FILE for the same names as this process's.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import { describeError, isJsonObject, type ResourceBinding } from '#api';
import {
  bindingChange,
  failClosed,
  type AdmissionOutcome,
  type AdmissionStrategy,
  type BindingChange,
  type OwnerAdmission,
} from '#accounting';
import { bindingCharge } from '#quota';

export const DECIDE_PATH = '/admission/decide';
/** Kubernetes caps a request body at 3 MiB; a forwarded change carries the object and the old one. */
const BODY_LIMIT_BYTES = 7 * 1024 * 1024;
/**
 * Kept back from the forwarder's deadline for the way there and back: an owner deciding after the
 * forwarder gave up holds a claim for a change that is never stored (until the landing window).
 */
const TRANSIT_MARGIN_MS = 100;

export interface AdmissionPeerOptions {
  bindAddress: string;
  port: number;
  certFile: string;
  keyFile: string;
  peerCaFile: string;
  reloadSeconds: number;
}

/** A forwarded change as the peers send it: the objects as judged, and the time left to decide. */
interface ForwardedChange {
  namespace: string;
  name: string;
  dryRun: boolean;
  object: ResourceBinding;
  oldObject?: ResourceBinding;
  budgetMs: number;
}

/**
 * The peer port: serves the owner's decisions to the other replicas, and forwards this replica's
 * changes to the owner while another process holds the Lease (`strategy`).
 */
export class AdmissionPeer implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly strategy: AdmissionStrategy;
  private readonly logger = new Logger('admission-peer');
  private readonly server: Server;
  private tls: PeerTls;
  private agent: Agent;
  private reload?: NodeJS.Timeout;
  private readonly forwarded: Counter<'result'>;
  private readonly served: Counter<'result'>;

  constructor(
    private readonly owner: Pick<OwnerAdmission, 'admit' | 'forwardTo'>,
    private readonly options: AdmissionPeerOptions,
    registry: Registry,
  ) {
    this.tls = readPeerTls(options);
    this.agent = this.newAgent();
    this.server = createServer(
      { ...this.tls.context, requestCert: true, rejectUnauthorized: true },
      (req, res) => void this.serve(req, res),
    );
    this.forwarded = new Counter({
      name: 'karmada_quota_admission_forwarded_total',
      help: 'Changes this webhook process forwarded to the admission owner, by result (answered, failed: answered fail-closed)',
      labelNames: ['result'],
      registers: [registry],
    });
    this.served = new Counter({
      name: 'karmada_quota_admission_peer_requests_total',
      help: 'Decisions asked of this process by its peers, by result (decided, refused: not a peer or not a change)',
      labelNames: ['result'],
      registers: [registry],
    });
    this.strategy = { admit: (change, answerBy) => this.admit(change, answerBy) };
  }

  async onApplicationBootstrap(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.bindAddress, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.logger.log(`answering forwarded decisions on ${this.options.bindAddress}:${this.options.port}`);
    this.reload = setInterval(() => this.reloadTls(), this.options.reloadSeconds * 1000).unref();
  }

  /**
   * After every onModuleDestroy: the owner keeps answering its peers until it has handed the Lease
   * over (then it refuses them: stopping), and a replica keeps forwarding until the review port is shut.
   */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.reload);
    this.agent.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Decided here while this process holds the Lease (or knows no other holder), else by the holder. */
  private async admit(change: BindingChange, answerBy: number): Promise<AdmissionOutcome> {
    const to = this.owner.forwardTo;
    if (to === undefined) return this.owner.admit(change, answerBy);
    try {
      const budgetMs = answerBy - Date.now() - TRANSIT_MARGIN_MS;
      if (budgetMs <= 0) throw new Error('no time left to ask it');
      const outcome = await this.post(to, forwardedBody(change, budgetMs), answerBy);
      this.forwarded.inc({ result: 'answered' });
      return outcome;
    } catch (err) {
      this.forwarded.inc({ result: 'failed' });
      return failClosed(`the admission owner at ${to} could not be reached in time (${describeError(err)})`);
    }
  }

  private post(address: string, body: string, answerBy: number): Promise<AdmissionOutcome> {
    const { hostname, port } = new URL(`https://${address}`);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent: this.agent,
          hostname: hostname.replace(/^\[|\]$/g, ''),
          port,
          path: DECIDE_PATH,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          signal: AbortSignal.timeout(Math.max(1, answerBy - Date.now())),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200)
              return reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
            try {
              resolve(decodeOutcome(JSON.parse(text)));
            } catch (err) {
              reject(err instanceof Error ? err : new Error(String(err)));
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /**
   * Whether the connection presented a replica's certificate, read once per connection:
   * getPeerCertificate() builds a whole object (9.6 % of the owner's CPU when read per forwarded
   * decision, docs/development/bench.md).
   */
  private fromPeer(socket: TLSSocket): boolean {
    let peer = this.peerSockets.get(socket);
    if (peer === undefined) {
      peer = isPeer(socket.getPeerCertificate(), this.tls.names);
      this.peerSockets.set(socket, peer);
    }
    return peer;
  }

  private readonly peerSockets = new WeakMap<TLSSocket, boolean>();

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, body: unknown, result: 'decided' | 'refused') => {
      this.served.inc({ result });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (!this.fromPeer(req.socket as TLSSocket))
      return answer(
        403,
        { message: `only webhook replicas with a certificate for ${this.tls.names} may ask for decisions` },
        'refused',
      );
    if (req.method !== 'POST' || req.url !== DECIDE_PATH)
      return answer(404, { message: `POST ${DECIDE_PATH} only` }, 'refused');
    let text: string;
    try {
      text = await readBody(req);
    } catch (err) {
      return answer(413, { message: describeError(err) }, 'refused');
    }
    let forwarded: ReturnType<typeof decodeForwarded>;
    try {
      forwarded = decodeForwarded(JSON.parse(text));
    } catch (err) {
      forwarded = { error: describeError(err) };
    }
    if ('error' in forwarded) return answer(400, { message: forwarded.error }, 'refused');
    let outcome: AdmissionOutcome;
    try {
      outcome = await this.owner.admit(forwarded.change, Date.now() + forwarded.budgetMs);
    } catch (err) {
      // As on the review path, where Nest turns it into a 500: one change fails, not the process.
      this.logger.error({ error: describeError(err) }, 'deciding a forwarded change failed');
      outcome = failClosed(`the admission owner failed deciding the change (${describeError(err)})`);
    }
    answer(200, outcome, 'decided');
  }

  private newAgent(): Agent {
    const names = this.tls.names;
    return new Agent({
      ...this.tls.context,
      keepAlive: true,
      // The owner is reached by its pod IP, which its certificate does not name: it is a peer when its
      // certificate is from the peer CA (verified) for this process's names.
      checkServerIdentity: (_host, cert) =>
        isPeer(cert, names) ? undefined : new Error(`the admission owner's certificate is not for ${names}`),
    });
  }

  private reloadTls(): void {
    try {
      const next = readPeerTls(this.options);
      if (next.fingerprint === this.tls.fingerprint) return;
      this.server.setSecureContext(next.context);
      // A peer verified against the old CA keeps that verdict on its open connection: end them all.
      if (next.context.ca !== this.tls.context.ca) this.server.closeAllConnections();
      this.tls = next;
      const old = this.agent;
      this.agent = this.newAgent();
      // Forwards in flight on the old agent's connections end by their deadline (at most 30 s).
      setTimeout(() => old.destroy(), 60_000).unref();
      this.logger.log('serving and presenting the renewed TLS certificate to peers');
    } catch (err) {
      this.logger.error(
        { error: describeError(err) },
        'could not load the TLS files for peers, keeping the previous ones',
      );
    }
  }
}

interface PeerTls {
  context: { key: string; cert: string; ca: string };
  /** The certificate's subject alternative names, as Node's TLS reports them. */
  names: string;
  fingerprint: string;
}

function readPeerTls(options: AdmissionPeerOptions): PeerTls {
  const context = {
    key: readFileSync(options.keyFile, 'utf8'),
    cert: readFileSync(options.certFile, 'utf8'),
    ca: readFileSync(options.peerCaFile, 'utf8'),
  };
  const certificate = new X509Certificate(context.cert);
  if (!certificate.subjectAltName)
    throw new Error(
      `${options.certFile} names no subject alternative name: peers recognise each other by them`,
    );
  return { context, names: certificate.subjectAltName, fingerprint: context.key + context.cert + context.ca };
}

export function isPeer(cert: PeerCertificate | undefined, names: string): boolean {
  return cert?.subjectaltname === names;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        reject(new Error(`a forwarded change is larger than ${BODY_LIMIT_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The wire form of a change to forward: the objects without their managedFields, which no decision reads. */
export function forwardedBody(change: BindingChange, budgetMs: number): string {
  const { namespace, name } = change.item.binding;
  const forwarded: ForwardedChange = {
    namespace,
    name,
    dryRun: change.item.dryRun,
    object: stripped(change.object),
    ...(change.old ? { oldObject: stripped(change.old.object) } : {}),
    budgetMs,
  };
  return JSON.stringify(forwarded);
}

function stripped(object: ResourceBinding): ResourceBinding {
  if (!object.metadata?.managedFields) return object;
  const metadata = { ...object.metadata };
  delete metadata.managedFields;
  return { ...object, metadata };
}

/** A forwarded change as the owner decides it (its charges computed here), or why it cannot be read. */
export function decodeForwarded(
  body: unknown,
): { change: BindingChange; budgetMs: number } | { error: string } {
  if (!isJsonObject(body)) return { error: 'a forwarded change must be a JSON object' };
  const { namespace, name, dryRun, object, oldObject, budgetMs } = body;
  if (typeof namespace !== 'string' || typeof name !== 'string' || !name)
    return { error: 'a forwarded change names no namespace and name' };
  if (typeof dryRun !== 'boolean' || typeof budgetMs !== 'number' || !(budgetMs > 0))
    return { error: 'a forwarded change lacks dryRun or a positive budgetMs' };
  if (
    !isJsonObject(object) ||
    !isJsonObject(object.spec) ||
    (oldObject !== undefined && !isJsonObject(oldObject))
  )
    return { error: 'a forwarded change lacks the ResourceBinding it asks for' };
  const binding = object as unknown as ResourceBinding;
  const old = oldObject as unknown as ResourceBinding | undefined;
  // Charged as the forwarder's review path charges the judged object: the raw one was validated there.
  const { charge } = bindingCharge(binding);
  return { change: bindingChange({ namespace, name }, binding, charge, dryRun, old), budgetMs };
}

/** The owner's answer as the forwarder trusts it: a decision or a refusal, each with its message. */
export function decodeOutcome(body: unknown): AdmissionOutcome {
  if (!isJsonObject(body) || typeof body.allowed !== 'boolean')
    throw new Error('the admission owner answered without a decision');
  if (body.allowed) return body as unknown as AdmissionOutcome;
  if (typeof body.message !== 'string') throw new Error('the admission owner refused without a message');
  if (body.unavailable === true) return { allowed: false, unavailable: true, message: body.message };
  if (typeof body.quota !== 'string' || !Array.isArray(body.exceeded))
    throw new Error('the admission owner refused without naming the quota');
  return body as unknown as AdmissionOutcome;
}
