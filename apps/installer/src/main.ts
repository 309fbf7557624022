// The chart's hook Jobs (karmada-quota installed into karmada-host, docs/operating/install.md#into-karmada-host):
// `installer apply` server-side-applies the objects the chart rendered for the Karmada API server
// (mounted at OBJECTS_DIR) and deletes what an earlier release of the same phase applied and this one
// does not; `installer delete` removes them at uninstall. KUBECONFIG names the Karmada API server.
// WAIT_FOR_READY_URL: an `apply` first waits until that URL answers 200 (the webhook's /readyz).
import * as k8s from '@kubernetes/client-node';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeError, isApiStatus } from '#api';
import {
  applyOrder,
  decodeObjects,
  deleteOrder,
  describeObject,
  INSTALL_PHASE_LABEL,
  KIND_API_VERSIONS,
  KIND_ORDER,
  staleObjects,
  type KarmadaApiServerObject,
} from './objects.js';
import { waitForReady } from './wait-ready.js';

const FIELD_MANAGER = 'karmada-quota-installer';
const CRD_ESTABLISHED_TIMEOUT_MS = 60_000;

const log = (message: string): void => void process.stdout.write(`${message}\n`);

function readObjects(dir: string): KarmadaApiServerObject[] {
  const names = readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort();
  return decodeObjects(
    names.map((name) => ({ name, documents: k8s.loadAllYaml(readFileSync(join(dir, name), 'utf8')) })),
  );
}

class KarmadaApiServer {
  private readonly objects: k8s.KubernetesObjectApi;
  readonly server: string;

  constructor(kc: k8s.KubeConfig) {
    this.objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    this.server = kc.getCurrentCluster()?.server ?? '(no server in the kubeconfig)';
  }

  async apply(object: KarmadaApiServerObject): Promise<void> {
    try {
      await this.objects.patch(
        object,
        undefined,
        undefined,
        FIELD_MANAGER,
        true,
        k8s.PatchStrategy.ServerSideApply,
      );
    } catch (err) {
      throw new Error(
        `cannot apply ${describeObject(object)} to the Karmada API server at ${this.server}: ${describeError(err)}`,
        { cause: err },
      );
    }
    log(`applied ${describeObject(object)}`);
  }

  /** Deletes `object`; one already gone is no error. */
  async delete(object: KarmadaApiServerObject): Promise<void> {
    try {
      await this.objects.delete(object, undefined, undefined, undefined, undefined, 'Background');
      log(`deleted ${describeObject(object)}`);
    } catch (err) {
      if (isApiStatus(err, 404)) return log(`${describeObject(object)} was already gone`);
      throw new Error(
        `cannot delete ${describeObject(object)} from the Karmada API server at ${this.server}: ${describeError(err)}`,
        { cause: err },
      );
    }
  }

  /** Every object of the kinds the chart applies that carries one of the phase labels. */
  async labelled(phases: readonly string[]): Promise<KarmadaApiServerObject[]> {
    const found: KarmadaApiServerObject[] = [];
    for (const kind of KIND_ORDER) {
      const apiVersion = KIND_API_VERSIONS[kind];
      const selector = `${INSTALL_PHASE_LABEL} in (${phases.join(',')})`;
      try {
        const list = await this.objects.list(
          apiVersion,
          kind,
          undefined,
          undefined,
          undefined,
          undefined,
          undefined,
          selector,
        );
        for (const item of list.items)
          found.push({
            apiVersion,
            kind,
            metadata: { name: item.metadata!.name!, namespace: item.metadata?.namespace },
          });
      } catch (err) {
        throw new Error(
          `cannot list ${kind}s on the Karmada API server at ${this.server}: ${describeError(err)}`,
          { cause: err },
        );
      }
    }
    return found;
  }

  /** Waits until the CRD is Established, so the services that start next find its API served. */
  async established(crd: KarmadaApiServerObject): Promise<void> {
    const deadline = Date.now() + CRD_ESTABLISHED_TIMEOUT_MS;
    for (;;) {
      const current = (await this.objects.read(crd)) as k8s.V1CustomResourceDefinition;
      if (current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
      if (Date.now() > deadline)
        throw new Error(
          `${describeObject(crd)} was not Established within ${CRD_ESTABLISHED_TIMEOUT_MS / 1000} s: ${JSON.stringify(current.status?.conditions ?? [])}`,
        );
      await sleep(500);
    }
  }
}

async function main(): Promise<void> {
  const action = process.argv[3];
  const dir = process.env.OBJECTS_DIR ?? '/etc/karmada-quota/objects';
  const phases = (process.env.INSTALL_PHASES ?? '').split(',').filter(Boolean);
  if ((action !== 'apply' && action !== 'delete') || phases.length === 0)
    throw new Error(
      'usage: installer apply|delete, with INSTALL_PHASES (the install-phase label values) and OBJECTS_DIR set; ' +
        "the chart's hook Jobs run it (docs/operating/install.md#into-karmada-host)",
    );
  const kc = new k8s.KubeConfig();
  if (process.env.KUBECONFIG) kc.loadFromFile(process.env.KUBECONFIG);
  else kc.loadFromCluster();
  const api = new KarmadaApiServer(kc);
  const objects = readObjects(dir);
  log(
    `${action === 'apply' ? 'applying' : 'deleting'} ${objects.length} objects on the Karmada API server at ${api.server}`,
  );
  if (action === 'apply') {
    // The register phase: the webhook must answer before it is registered (wait-ready.ts).
    const readyUrl = process.env.WAIT_FOR_READY_URL;
    if (readyUrl)
      await waitForReady(readyUrl, {
        timeoutMs: Number(process.env.WAIT_FOR_READY_SECONDS ?? '240') * 1000,
        log,
      });
    for (const object of applyOrder(objects)) {
      await api.apply(object);
      if (object.kind === 'CustomResourceDefinition') await api.established(object);
    }
    for (const object of staleObjects(objects, await api.labelled(phases))) await api.delete(object);
  } else {
    for (const object of deleteOrder([...objects, ...staleObjects(objects, await api.labelled(phases))]))
      await api.delete(object);
  }
  log('done');
}

main().catch((err: unknown) => {
  process.stderr.write(`installer: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
