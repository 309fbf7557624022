import { Logger } from '@nestjs/common';
import * as k8s from '@kubernetes/client-node';
import { describeError, isApiStatus, RESOURCE_BINDING, type ResourceBinding } from '#api';
import { abortAt, type StoreCallOptions } from '#service-kit';

/**
 * A ResourceBinding of a name as stored on the Karmada API server, read from the API server itself
 * (not a cache: Karmada's detector retries a create within milliseconds of the first one).
 */
export class StoredBindings {
  private readonly objects: k8s.CustomObjectsApi;
  private readonly logger = new Logger('StoredBindings');

  constructor(karmada: k8s.KubeConfig) {
    this.objects = karmada.makeApiClient(k8s.CustomObjectsApi);
  }

  /**
   * True when stored; false when not, or when the Karmada API server could not say: the create is
   * then admitted as usual, and a claim for a create that fails AlreadyExists only holds quota
   * until it expires (conservative), so the failure is logged, not answered. Given up at
   * `options.deadline`: the review's own deadline, whose fail-closed answer then goes out (no
   * Karmada API server call outlasts it).
   */
  async exists(namespace: string, name: string, options: StoreCallOptions = {}): Promise<boolean> {
    const stored = await this.read(
      namespace,
      name,
      'to refuse a duplicate create, admitting it as usual',
      options,
    );
    return stored !== undefined;
  }

  /**
   * The resourceVersion of a consistent read of the ResourceBindings: the Karmada API server's now
   * (a list without a resourceVersion, one item long).
   */
  async consistentVersion(options: StoreCallOptions = {}): Promise<string> {
    const { group, version, plural } = RESOURCE_BINDING;
    const list = (await this.objects.listClusterCustomObject(
      { group, version, plural, limit: 1 },
      abortAt(options.deadline),
    )) as k8s.KubernetesListObject<ResourceBinding>;
    const resourceVersion = list.metadata?.resourceVersion;
    if (!resourceVersion)
      throw new Error('the Karmada API server listed ResourceBindings without a resourceVersion');
    return resourceVersion;
  }

  /**
   * The stored binding; undefined when there is none, or when the Karmada API server could not say
   * (logged, with what the read was `for`).
   */
  async read(
    namespace: string,
    name: string,
    purpose: string,
    options: StoreCallOptions = {},
  ): Promise<ResourceBinding | undefined> {
    try {
      return (await this.objects.getNamespacedCustomObject(
        {
          group: RESOURCE_BINDING.group,
          version: RESOURCE_BINDING.version,
          plural: RESOURCE_BINDING.plural,
          namespace,
          name,
        },
        abortAt(options.deadline),
      )) as ResourceBinding;
    } catch (err) {
      if (!isApiStatus(err, 404))
        this.logger.warn(
          { namespace, binding: name, error: describeError(err) },
          `could not read the ResourceBinding ${purpose} ` +
            `(the webhook needs get on resourcebindings.${RESOURCE_BINDING.group})`,
        );
      return undefined;
    }
  }
}
