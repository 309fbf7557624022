import * as k8s from '@kubernetes/client-node';
import { QUOTA_ADMIN_RIGHT } from '#quota';
import { abortAt } from '#service-kit';
import type { UserInfo } from './admission-review.js';

/**
 * Whether a user holds the right that guards a team's limit (QUOTA_ADMIN_RIGHT: update karmadaquotas)
 * in a namespace, asked of the Karmada API server with a SubjectAccessReview: its authorizers answer
 * as they would for the user's own write of a KarmadaQuota. Not cached: FRQ limit changes are rare,
 * and a right revoked must stop working at once.
 */
export class QuotaAdminRight {
  private readonly authorization: k8s.AuthorizationV1Api;

  constructor(karmada: k8s.KubeConfig) {
    this.authorization = karmada.makeApiClient(k8s.AuthorizationV1Api);
  }

  /** Given up at `deadline` (epoch ms); throws when the API server does not answer. */
  async heldBy(user: UserInfo, namespace: string, deadline: number): Promise<boolean> {
    const review = await this.authorization.createSubjectAccessReview(
      {
        body: {
          spec: {
            user: user.username,
            uid: user.uid,
            groups: user.groups,
            extra: user.extra,
            resourceAttributes: { ...QUOTA_ADMIN_RIGHT, namespace },
          },
        },
      },
      abortAt(deadline),
    );
    return review.status?.allowed === true;
  }
}
