import * as k8s from '@kubernetes/client-node';
import { ServiceUnavailableException, UnauthorizedException } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { Counter, type Registry } from 'prom-client';
import { KARMADA_QUOTA, describeError } from '#api';
import {
  bearerToken,
  mapLimited,
  subjectKey,
  tokenKey,
  type Caller,
  type NamespaceAccess,
} from './access.js';

type TokenAnswer = { caller: Caller } | { rejected: string };

/** SubjectAccessReviews in flight at once for one caller's list of namespaces. */
const REVIEW_CONCURRENCY = 8;

/**
 * Who a caller is (TokenReview on the Karmada API server) and which namespaces' KarmadaQuotas they may get
 * (SubjectAccessReview). Answers are cached briefly by token hash and by caller and namespace;
 * concurrent requests for the same answer share one review; failed reviews are not cached.
 */
export class Authorizer {
  private readonly authentication: k8s.AuthenticationV1Api;
  private readonly authorization: k8s.AuthorizationV1Api;
  private readonly tokens: LRUCache<string, Promise<TokenAnswer>>;
  private readonly decisions: LRUCache<string, Promise<boolean>>;
  private readonly reviews: Counter<'review' | 'result'>;

  constructor(karmada: k8s.KubeConfig, cache: { ttlSeconds: number; maxEntries: number }, metrics: Registry) {
    this.authentication = karmada.makeApiClient(k8s.AuthenticationV1Api);
    this.authorization = karmada.makeApiClient(k8s.AuthorizationV1Api);
    // An answer expires ttlSeconds after it was asked for, however often it is read since.
    const options = { max: cache.maxEntries, ttl: cache.ttlSeconds * 1000 };
    this.tokens = new LRUCache(options);
    this.decisions = new LRUCache(options);
    this.reviews = new Counter({
      name: 'karmada_quota_console_reviews_total',
      help: 'TokenReviews and SubjectAccessReviews sent to the Karmada API server (cache misses), by result',
      labelNames: ['review', 'result'],
      registers: [metrics],
    });
  }

  /**
   * The caller of an Authorization header; 401 for a missing or rejected token, 503 if the Karmada API
   * server cannot tell.
   */
  async authenticate(authorization: string | undefined): Promise<Caller> {
    const parsed = bearerToken(authorization);
    if ('problem' in parsed) throw new UnauthorizedException(parsed.problem);
    const answer = await this.cached(this.tokens, tokenKey(parsed.token), () =>
      this.reviewToken(parsed.token),
    );
    if ('rejected' in answer) throw new UnauthorizedException(answer.rejected);
    return answer.caller;
  }

  /** Of `namespaces`, those where the caller may get karmadaquotas ('all' with a cluster-wide grant). */
  async access(caller: Caller, namespaces: readonly string[]): Promise<NamespaceAccess> {
    if (await this.allowed(caller, '')) return 'all';
    const allowed = await mapLimited(namespaces, REVIEW_CONCURRENCY, (ns) => this.allowed(caller, ns));
    return new Set(namespaces.filter((_, i) => allowed[i]));
  }

  async mayRead(caller: Caller, namespace: string): Promise<boolean> {
    return (await this.allowed(caller, '')) || this.allowed(caller, namespace);
  }

  private async reviewToken(token: string): Promise<TokenAnswer> {
    let review: k8s.V1TokenReview;
    try {
      review = await this.authentication.createTokenReview({ body: { spec: { token } } });
    } catch (err) {
      this.reviews.inc({ review: 'token', result: 'error' });
      throw new ServiceUnavailableException(
        `could not verify the token with the Karmada API server (TokenReview): ${describeError(err)}`,
      );
    }
    const user = review.status?.user;
    if (!review.status?.authenticated || !user?.username) {
      this.reviews.inc({ review: 'token', result: 'rejected' });
      const why = review.status?.error ? ` (${review.status.error})` : '';
      return {
        rejected: `the Karmada API server did not accept this token${why}: log in with a current one`,
      };
    }
    this.reviews.inc({ review: 'token', result: 'accepted' });
    return {
      caller: {
        username: user.username,
        uid: user.uid ?? '',
        groups: user.groups ?? [],
        extra: user.extra ?? {},
      },
    };
  }

  /** May the caller get karmadaquotas in `namespace` ('' for every namespace)? */
  private allowed(caller: Caller, namespace: string): Promise<boolean> {
    return this.cached(this.decisions, `${subjectKey(caller)}/${namespace}`, async () => {
      try {
        const review = await this.authorization.createSubjectAccessReview({
          body: {
            spec: {
              user: caller.username,
              uid: caller.uid || undefined,
              groups: caller.groups,
              extra: caller.extra,
              resourceAttributes: {
                verb: 'get',
                group: KARMADA_QUOTA.group,
                resource: KARMADA_QUOTA.plural,
                ...(namespace ? { namespace } : {}),
              },
            },
          },
        });
        const allowed = review.status?.allowed === true;
        this.reviews.inc({ review: 'access', result: allowed ? 'allowed' : 'denied' });
        return allowed;
      } catch (err) {
        this.reviews.inc({ review: 'access', result: 'error' });
        throw new ServiceUnavailableException(
          `could not check access with the Karmada API server (SubjectAccessReview): ${describeError(err)}`,
        );
      }
    });
  }

  private cached<V>(cache: LRUCache<string, Promise<V>>, key: string, load: () => Promise<V>): Promise<V> {
    const hit = cache.get(key);
    if (hit) return hit;
    const loading = load();
    cache.set(key, loading);
    // A failure says nothing about the token or the grant: the next request asks again.
    loading.catch(() => {
      if (cache.peek(key) === loading) cache.delete(key);
    });
    return loading;
  }
}
