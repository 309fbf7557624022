import { KARMADA_QUOTA, RESOURCE_BINDING } from '#api';
import { kindProblem, type GroupVersionKind } from './admission-kind.js';

const gvk = (group: string, version: string, kind: string): GroupVersionKind => ({ group, version, kind });

describe('kindProblem: which reviews an endpoint reads', () => {
  test.each<[string, GroupVersionKind, GroupVersionKind, string | undefined]>([
    [
      'a v1alpha2 ResourceBinding',
      gvk('work.karmada.io', 'v1alpha2', 'ResourceBinding'),
      RESOURCE_BINDING,
      undefined,
    ],
    [
      'a v1alpha1 KarmadaQuota',
      gvk('quota.karmada.io', 'v1alpha1', 'KarmadaQuota'),
      KARMADA_QUOTA,
      undefined,
    ],
    [
      'a v1alpha1 ResourceBinding (registered without conversion)',
      gvk('work.karmada.io', 'v1alpha1', 'ResourceBinding'),
      RESOURCE_BINDING,
      'this endpoint reads ResourceBinding.work.karmada.io v1alpha2 only, not v1alpha1: register it for apiVersions [v1alpha2] with matchPolicy Equivalent, so the API server converts requests made through other versions first (the Helm chart does)',
    ],
    [
      'a ResourceBinding of no version',
      gvk('work.karmada.io', '', 'ResourceBinding'),
      RESOURCE_BINDING,
      'this endpoint reads ResourceBinding.work.karmada.io v1alpha2 only, not an unnamed version: register it for apiVersions [v1alpha2] with matchPolicy Equivalent, so the API server converts requests made through other versions first (the Helm chart does)',
    ],
    [
      'a KarmadaQuota of another version',
      gvk('quota.karmada.io', 'v1beta1', 'KarmadaQuota'),
      KARMADA_QUOTA,
      'this endpoint reads KarmadaQuota.quota.karmada.io v1alpha1 only, not v1beta1: register it for apiVersions [v1alpha1] with matchPolicy Equivalent, so the API server converts requests made through other versions first (the Helm chart does)',
    ],
    [
      'a Pod',
      gvk('', 'v1', 'Pod'),
      RESOURCE_BINDING,
      "this endpoint admits ResourceBinding.work.karmada.io, not Pod.core: check the ValidatingWebhookConfiguration's rules",
    ],
    [
      'a ClusterResourceBinding, of the right group and version',
      gvk('work.karmada.io', 'v1alpha2', 'ClusterResourceBinding'),
      RESOURCE_BINDING,
      "this endpoint admits ResourceBinding.work.karmada.io, not ClusterResourceBinding.work.karmada.io: check the ValidatingWebhookConfiguration's rules",
    ],
  ])('%s', (_what, got, expected, problem) => {
    expect(kindProblem(got, expected)).toBe(problem);
  });
});
