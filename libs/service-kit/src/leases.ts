/** What every coordination.k8s.io Lease writer here shares (the aggregator's and the admission owner's). */

/** metav1.MicroTime wants six fractional digits; client-node sends it as given. */
export const microTime = (date: Date): Date =>
  date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;

/** A Lease could not be created because its namespace is missing: what the admin does about it. */
export function leaseNamespaceMissing(namespace: string, cause: unknown): Error {
  return new Error(
    `namespace ${namespace} does not exist on the Karmada API server: create it or set LEASE_NAMESPACE`,
    { cause },
  );
}
