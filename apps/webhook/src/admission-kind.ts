/** A group, version and kind, as an AdmissionReview names the object's (request.kind). */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/**
 * Why an endpoint that reads `expected` cannot answer a review of `got`, or undefined. Another
 * version of the right kind reaches the webhook only when the registration matches that version
 * without conversion: its object has another shape (a v1alpha1 ResourceBinding keeps its replicas
 * under spec.resource), which would be charged wrongly, so it is refused, naming the fix.
 */
export function kindProblem(got: GroupVersionKind, expected: GroupVersionKind): string | undefined {
  if (got.group !== expected.group || got.kind !== expected.kind)
    return `this endpoint admits ${expected.kind}.${expected.group}, not ${got.kind}.${got.group || 'core'}: check the ValidatingWebhookConfiguration's rules`;
  if (got.version !== expected.version)
    return `this endpoint reads ${expected.kind}.${expected.group} ${expected.version} only, not ${got.version || 'an unnamed version'}: register it for apiVersions [${expected.version}] with matchPolicy Equivalent, so the API server converts requests made through other versions first (the Helm chart does)`;
  return undefined;
}
