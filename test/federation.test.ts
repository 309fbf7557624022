import { spawnSync } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import type { KarmadaQuota } from '#api';
import { client, createNamespace, eventually, federation, uniqueName } from './support/federation.js';

const QUOTA = { group: 'quota.karmada.io', version: 'v1alpha1', plural: 'karmadaquotas' };

describe('the local federation', () => {
  const fed = federation();
  const hostObjects = () => client(fed.host).makeApiClient(k8s.CustomObjectsApi);

  test('serves the Kubernetes version the wrapper module pins', async () => {
    const version = await client(fed.host).makeApiClient(k8s.VersionApi).getCode();
    expect(version.gitVersion).toBe(fed.kubernetesVersion);
    expect(version.gitVersion).toMatch(/^v1\.34\./);
  });

  describe('KarmadaQuota on the host', () => {
    const namespace = uniqueName('kq');
    beforeAll(() => createNamespace(fed.host, namespace));

    const newQuota = (name: string): KarmadaQuota => ({
      apiVersion: 'quota.karmada.io/v1alpha1',
      kind: 'KarmadaQuota',
      metadata: { name, namespace },
      spec: { hard: { cpu: '100', memory: '200Gi', pods: '500' } },
    });

    test('is created, and its status is written through the status subresource', async () => {
      const api = hostObjects();
      const created = (await api.createNamespacedCustomObject({
        ...QUOTA,
        namespace,
        body: newQuota('team-a'),
      })) as KarmadaQuota;
      expect(created.metadata?.uid).toBeTruthy();
      expect(created.status).toBeUndefined();

      const status = { hard: { cpu: '100' }, used: { cpu: '1500m' }, observedGeneration: 1 };
      const written = (await api.replaceNamespacedCustomObjectStatus({
        ...QUOTA,
        namespace,
        name: 'team-a',
        body: { ...created, status },
      })) as KarmadaQuota;
      expect(written.status).toEqual(status);

      // The main resource ignores status, the status subresource ignores spec.
      const specWrite = (await api.replaceNamespacedCustomObject({
        ...QUOTA,
        namespace,
        name: 'team-a',
        body: { ...written, status: { used: { cpu: '99' } } },
      })) as KarmadaQuota;
      expect(specWrite.status).toEqual(status);
    });

    test('rejects a status write with a stale resourceVersion with 409 Conflict', async () => {
      const api = hostObjects();
      const created = (await api.createNamespacedCustomObject({
        ...QUOTA,
        namespace,
        body: newQuota('cas'),
      })) as KarmadaQuota;
      await api.replaceNamespacedCustomObjectStatus({
        ...QUOTA,
        namespace,
        name: 'cas',
        body: { ...created, status: { used: { cpu: '1' } } },
      });
      // `created` still carries the resourceVersion from before the first status write.
      const stale = api.replaceNamespacedCustomObjectStatus({
        ...QUOTA,
        namespace,
        name: 'cas',
        body: { ...created, status: { used: { cpu: '2' } } },
      });
      await expect(stale).rejects.toMatchObject({ code: 409 });
      const current = (await api.getNamespacedCustomObject({
        ...QUOTA,
        namespace,
        name: 'cas',
      })) as KarmadaQuota;
      expect(current.status?.used).toEqual({ cpu: '1' });
    });

    test('kubectl get kq -o wide shows used, reserved and hard for cpu, memory and pods', async () => {
      const out = spawnSync(
        fed.kubectl,
        ['--kubeconfig', fed.host.kubeconfig, 'get', 'kq', '-n', namespace, '-o', 'wide'],
        {
          encoding: 'utf8',
        },
      );
      expect(out.stderr).toBe('');
      const header = out.stdout.split('\n')[0]!;
      for (const resource of ['CPU', 'MEMORY', 'PODS']) expect(header).toContain(resource);
      expect(header).toMatch(/RESERVED/);
      expect(header).toMatch(/HARD/);
      expect(header).toMatch(/AGE/);
      expect(out.stdout).toMatch(/^team-a\s/m);
    });
  });

  describe('member clusters', () => {
    test('each member is registered on the host as a Cluster with a working credential Secret', async () => {
      const kc = client(fed.host);
      const clusters = (await kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({
        group: 'cluster.karmada.io',
        version: 'v1alpha1',
        plural: 'clusters',
      })) as {
        items: {
          metadata: { name: string };
          spec: { apiEndpoint: string; secretRef: { namespace: string; name: string } };
        }[];
      };
      expect(clusters.items.map((c) => c.metadata.name).sort()).toEqual(
        fed.members.map((m) => m.name).sort(),
      );

      const core = kc.makeApiClient(k8s.CoreV1Api);
      for (const cluster of clusters.items) {
        const secret = await core.readNamespacedSecret(cluster.spec.secretRef);
        const token = Buffer.from(secret.data!.token!, 'base64').toString();
        const caBundle = Buffer.from(secret.data!.caBundle!, 'base64').toString();
        const member = new k8s.KubeConfig();
        member.loadFromOptions({
          clusters: [
            { name: 'm', server: cluster.spec.apiEndpoint, caData: Buffer.from(caBundle).toString('base64') },
          ],
          users: [{ name: 'm', token }],
          contexts: [{ name: 'm', cluster: 'm', user: 'm' }],
          currentContext: 'm',
        });
        const namespaces = await member.makeApiClient(k8s.CoreV1Api).listNamespace();
        expect(namespaces.items.map((n) => n.metadata?.name)).toContain('kube-system');
      }
    });

    test.each([0, 1])(
      'a Deployment in member %i gets its Pods from kube-controller-manager',
      async (index) => {
        const member = fed.members[index]!;
        const namespace = uniqueName('deploy');
        await createNamespace(member, namespace);
        const kc = client(member);
        await kc.makeApiClient(k8s.AppsV1Api).createNamespacedDeployment({
          namespace,
          body: {
            metadata: { name: 'web' },
            spec: {
              replicas: 3,
              selector: { matchLabels: { app: 'web' } },
              template: {
                metadata: { labels: { app: 'web' } },
                spec: {
                  containers: [{ name: 'web', image: 'nginx', resources: { requests: { cpu: '200m' } } }],
                },
              },
            },
          },
        });
        const pods = await eventually(
          () => kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace }),
          (list) => list.items.length === 3,
        );
        for (const pod of pods.items) {
          expect(pod.metadata?.ownerReferences?.[0]?.kind).toBe('ReplicaSet');
          expect(pod.status?.phase).toBe('Pending'); // no nodes: Pending pods still count towards quota
        }
      },
    );
  });
});
