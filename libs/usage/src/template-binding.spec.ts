import type { ResourceBinding } from '#api';
import { bindingForTemplate, templateBindingName, updatedForTemplate } from './template-binding.js';

const podSpec = (cpu: string, extra: object = {}) => ({
  containers: [{ name: 'c', image: 'x', resources: { requests: { cpu, memory: '1Gi' } } }],
  ...extra,
});
const workload = (apiVersion: string, kind: string, spec: object) => ({
  apiVersion,
  kind,
  metadata: { name: 'Web', namespace: 'team' },
  spec,
});

describe('bindingForTemplate', () => {
  it.each([
    [
      'a Deployment: spec.replicas',
      workload('apps/v1', 'Deployment', { replicas: 3, template: { spec: podSpec('500m') } }),
      3,
    ],
    [
      'a Deployment without replicas: 0, as Karmada reads it (the API server defaults it to 1 first)',
      workload('apps/v1', 'Deployment', { template: { spec: podSpec('500m') } }),
      0,
    ],
    [
      'a StatefulSet',
      workload('apps/v1', 'StatefulSet', { replicas: 2, template: { spec: podSpec('500m') } }),
      2,
    ],
    [
      'a ReplicaSet scaled to 0',
      workload('apps/v1', 'ReplicaSet', { replicas: 0, template: { spec: podSpec('500m') } }),
      0,
    ],
    [
      'a Job: spec.parallelism',
      workload('batch/v1', 'Job', { parallelism: 4, completions: 8, template: { spec: podSpec('500m') } }),
      4,
    ],
    [
      'a Job with fewer completions than parallelism: spec.completions',
      workload('batch/v1', 'Job', { parallelism: 4, completions: 2, template: { spec: podSpec('500m') } }),
      2,
    ],
    ['a Pod: 1', workload('v1', 'Pod', podSpec('500m')), 1],
  ])('%s replicas, each asking what its pod template asks', (_, template, replicas) => {
    const binding = bindingForTemplate(template)!;
    expect(binding.metadata).toEqual({ name: `web-${template.kind.toLowerCase()}`, namespace: 'team' });
    expect(binding.spec).toEqual({
      resource: { apiVersion: template.apiVersion, kind: template.kind, namespace: 'team', name: 'Web' },
      replicas,
      replicaRequirements: { resourceRequest: { cpu: '500m', memory: '1Gi' } },
    });
  });

  it('counts init containers, overhead and the priority class as the scheduler does', () => {
    const spec = podSpec('500m', {
      initContainers: [{ name: 'i', image: 'x', resources: { requests: { cpu: '2' } } }],
      overhead: { cpu: '100m' },
      priorityClassName: 'high',
    });
    const binding = bindingForTemplate(workload('apps/v1', 'Deployment', { template: { spec } }))!;
    expect(binding.spec.replicaRequirements).toEqual({
      resourceRequest: { cpu: '2100m', memory: '1Gi' },
      priorityClassName: 'high',
    });
  });

  it('keeps a stored binding as it is (its placement and clusters), with the new replicas and requests', () => {
    const stored: ResourceBinding = {
      metadata: { name: 'web-deployment', namespace: 'team', uid: 'u1' },
      spec: {
        resource: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'team', name: 'Web' },
        replicas: 2,
        replicaRequirements: { resourceRequest: { cpu: '100m' } },
        clusters: [{ name: 'member1', replicas: 2 }],
      },
    };
    const template = workload('apps/v1', 'Deployment', { replicas: 5, template: { spec: podSpec('1') } });
    expect(updatedForTemplate(stored, bindingForTemplate(template)!)).toEqual({
      ...stored,
      spec: {
        ...stored.spec,
        replicas: 5,
        replicaRequirements: { resourceRequest: { cpu: '1', memory: '1Gi' } },
      },
    });
  });

  it.each([
    [
      'a DaemonSet (its replicas depend on the clusters)',
      workload('apps/v1', 'DaemonSet', { template: { spec: podSpec('1') } }),
    ],
    ['a CronJob', workload('batch/v1', 'CronJob', {})],
    ['a kind of the same name in another group', workload('example.com/v1', 'Deployment', { replicas: 1 })],
    ['an object without a namespace', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } }],
    ['no object', null],
  ])('none for %s', (_, template) => {
    expect(bindingForTemplate(template)).toBeUndefined();
  });

  it("names the binding as Karmada does: '<name>-<kind>', lowercased", () => {
    expect(templateBindingName('StatefulSet', 'DB')).toBe('db-statefulset');
  });
});
