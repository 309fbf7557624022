import * as k8s from '@kubernetes/client-node';

/**
 * An error as an operator can act on it, in one line: for an API error the HTTP code and the
 * Status message (client-node's own text carries the whole response, headers and body), for a
 * network error its code (ECONNREFUSED ...). Never the request, so never a bearer token.
 */
export function describeError(err: unknown): string {
  if (err instanceof k8s.ApiException) {
    try {
      const status = JSON.parse(String(err.body)) as { message?: unknown };
      if (typeof status.message === 'string' && status.message) return `HTTP ${err.code}: ${status.message}`;
    } catch {
      // not a Status body
    }
    return `HTTP ${err.code}`;
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && code ? `${code} ${err.message}` : err.message;
  }
  return String(err);
}

/** Whether `err` is the API server's answer with this HTTP status code (404 NotFound, 409 Conflict, ...). */
export function isApiStatus(err: unknown, code: number): boolean {
  return err instanceof k8s.ApiException && err.code === code;
}
