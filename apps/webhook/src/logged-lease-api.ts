import type { Logger } from '@nestjs/common';
import { describeError } from '#api';
import { ConflictError, type LeaseApi } from '#service-kit';

/**
 * The admission Lease's API with its failures logged: AdmissionLease and BatchedFence read any failure
 * as "unreachable" or "changed", and the adapter's message (a missing namespace, a missing RBAC rule)
 * is what an admin acts on. Each message is logged when it first appears, not every round; a conflict
 * (another process wrote first) is the protocol working, not a failure.
 */
export function loggedLeaseApi(api: LeaseApi, logger: Logger): LeaseApi {
  let last = '';
  const noted = <T>(call: Promise<T>): Promise<T> =>
    call.then(
      (result) => {
        last = '';
        return result;
      },
      (err: unknown) => {
        const message = describeError(err);
        if (!(err instanceof ConflictError) && message !== last)
          logger.warn({ error: message }, 'the admission Lease could not be read or written');
        last = message;
        throw err;
      },
    );
  return {
    read: () => noted(api.read()),
    write: (next, expected) => noted(api.write(next, expected)),
  };
}
