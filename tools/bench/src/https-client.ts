import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { ApiEndpoint, ClientCertificate } from '../../federation/src/index.js';

export interface JsonResponse {
  status: number;
  body: unknown;
}

/**
 * A keep-alive HTTPS JSON client for the load generators: a fresh TLS handshake per request (as
 * client-node makes) would cost more than what is measured. Verifies the server with `ca`; presents
 * `clientCertificate` when given (our webhook answers only the API server's).
 */
export class HttpsJsonClient {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    options: { ca: string; token?: string; maxSockets: number; clientCertificate?: ClientCertificate },
    private readonly headers: Record<string, string> = options.token
      ? { authorization: `Bearer ${options.token}` }
      : {},
  ) {
    const client = options.clientCertificate;
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: options.maxSockets,
      ca: options.ca,
      ...(client ? { cert: readFileSync(client.certFile), key: readFileSync(client.keyFile) } : {}),
    });
  }

  /** A client of an API server of the federation, as its static admin. */
  static forApiServer(endpoint: ApiEndpoint, maxSockets: number): HttpsJsonClient {
    return new HttpsJsonClient(endpoint.server, {
      ca: readFileSync(endpoint.caFile, 'utf8'),
      token: endpoint.token,
      maxSockets,
    });
  }

  post(path: string, body: string): Promise<JsonResponse> {
    return this.call('POST', path, body);
  }

  get(path: string): Promise<JsonResponse> {
    return this.call('GET', path);
  }

  delete(path: string): Promise<JsonResponse> {
    return this.call('DELETE', path);
  }

  /** A GET whose answer is kept as bytes (a pprof profile); rejects only when no answer came. */
  download(path: string): Promise<{ status: number; bytes: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.baseUrl}${path}`, { agent: this.agent, headers: this.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** Resolves with any HTTP status; rejects only when no answer came (connection refused, reset). */
  call(method: string, path: string, body?: string): Promise<JsonResponse> {
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.baseUrl}${path}`,
        {
          method,
          agent: this.agent,
          headers: {
            ...this.headers,
            accept: 'application/json',
            ...(body === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              // not JSON: keep the text, for the error message
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
