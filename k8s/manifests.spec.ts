import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { allowsIngress, matches, NetworkPolicy, Peer, PodUnderTest } from './support/network-policy';
import { installedTool, KubeObject, render, renderKustomization, renderWithTool } from './support/kustomize';
import { schemaErrors } from './support/schema-validation';

/**
 * Static checks of the deployment files: the rendered kustomize output of k8s/base and
 * k8s/overlays/production, docker/compose.yaml and docker/Dockerfile. No cluster or Docker engine
 * is needed. Rendering uses kustomize or kubectl when one is on PATH, else the built-in renderer
 * (k8s/support/kustomize.ts); with a tool installed, both must agree. Every rendered object is
 * validated against its Kubernetes API schema (k8s/support/schema-validation.ts).
 */

const K8S_DIR = __dirname;
const ROOT = join(__dirname, '..');
const BASE_DIR = join(K8S_DIR, 'base');
const PRODUCTION_DIR = join(K8S_DIR, 'overlays', 'production');
const SPLIT_EDGE_DIR = join(K8S_DIR, 'overlays', 'production-split-edge');
const COMPOSE_FILE = join(ROOT, 'docker', 'compose.yaml');
const DOCKERFILE = join(ROOT, 'docker', 'Dockerfile');
const OPERATIONS_DOC = join(ROOT, 'docs', 'operations.md');
const NAMESPACE = 'model-gateway';

const APPS = ['edge-gateway', 'inference-router', 'key-service', 'account-service', 'metering-service', 'video-worker'] as const;
type App = (typeof APPS)[number];
const BACKENDS = APPS.filter((app) => app !== 'edge-gateway');
const MIGRATION_ENTRYPOINT = 'dist/libs/db/src/migrate.main.js';
const PROVIDER_KEYS = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'];
const OBJECT_STORE_CREDENTIALS = ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'];

/**
 * The secret variables each app is given, and no others. Only the apps that call providers get their
 * keys: the edge and metering read the whole catalog without them (requireCredentials: false).
 */
const SECRET_ENV: Record<App, string[]> = {
  'edge-gateway': ['FILE_URL_SECRET', ...OBJECT_STORE_CREDENTIALS],
  'inference-router': [...OBJECT_STORE_CREDENTIALS, ...PROVIDER_KEYS, 'REASONING_SEAL_KEY', 'REASONING_SEAL_KEYS'],
  'key-service': ['DATABASE_URL', 'KEY_ENCRYPTION_KEY'],
  'account-service': ['DATABASE_URL'],
  'metering-service': ['DATABASE_URL'],
  'video-worker': [...OBJECT_STORE_CREDENTIALS, ...PROVIDER_KEYS],
};

// Loose shapes: only the fields these checks read.
interface Probe {
  httpGet?: { path?: string; port?: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; configMapKeyRef?: { name: string; key: string } };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  restartPolicy?: string;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}
interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}
type Workload = KubeObject & {
  spec: { replicas?: number; selector?: { matchLabels?: Record<string, string> }; template: PodTemplate; backoffLimit?: number };
};
type Hpa = KubeObject & {
  spec: {
    scaleTargetRef: { kind: string; name: string };
    minReplicas?: number;
    metrics: { type: string; resource?: { name: string }; pods?: { metric: { name: string; selector?: Parameters<typeof matches>[0] } } }[];
  };
};
type ScaledObject = KubeObject & {
  spec: {
    scaleTargetRef: { name: string; kind?: string };
    minReplicaCount?: number;
    triggers: { type: string; metadata: Record<string, string> }[];
  };
};
type Pdb = KubeObject & {
  spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number | string; minAvailable?: number | string };
};
type Secret = KubeObject & { stringData?: Record<string, string>; data?: Record<string, string> };
type Service = KubeObject & { spec: { selector: Record<string, string>; ports: { name?: string; port: number }[] } };
type Ingress = KubeObject & {
  spec: {
    rules: { http: { paths: { path: string; pathType: string; backend: { service: { name: string; port: { name?: string; number?: number } } } }[] } }[];
  };
};
type ConfigMap = KubeObject & { data: Record<string, string> };

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : yamlFilesUnder(path);
    return /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

/** Every document of a file as plain data; merge keys (`<<:`) resolved as Compose does. */
function parseFile(path: string): { values: unknown[]; errors: string[] } {
  const documents = parseAllDocuments(readFileSync(path, 'utf8'), { merge: true });
  if (!Array.isArray(documents)) return { values: [], errors: ['not a YAML stream'] };
  return {
    values: documents.map((document) => document.toJS()).filter((value) => value !== null && value !== undefined),
    errors: documents.flatMap((document) => document.errors.map((error) => error.message)),
  };
}

const sortById = (objects: KubeObject[]) =>
  [...objects].sort((a, b) => `${a.kind}/${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.namespace}/${b.metadata.name}`));

const tool = installedTool();
const itWithTool = tool ? it : it.skip;
const rendered = { base: render(BASE_DIR), production: render(PRODUCTION_DIR), splitEdge: render(SPLIT_EDGE_DIR) };
const baseSecrets = rendered.base.objects.filter((object) => object.kind === 'Secret') as Secret[];
const secretKeys = (name: string) => {
  const secret = baseSecrets.find((candidate) => candidate.metadata.name === name);
  return secret ? Object.keys({ ...secret.data, ...secret.stringData }) : undefined;
};
/** The BullMQ queue name of video jobs, read from the contracts lib (deploy may not import libs). */
const videoQueue = /video:\s*'([^']+)'/.exec(readFileSync(join(ROOT, 'libs', 'contracts', 'src', 'queues.ts'), 'utf8'))?.[1];

/** Kubernetes quantities (`250m`, `1`, `512Mi`, `1G`) as numbers, to compare requests and limits. */
function quantity(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(value);
  if (!match) throw new Error(`not a quantity: ${value}`);
  const factor: Record<string, number> = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(match[1]) * (match[2] ? factor[match[2]] : 1);
}

describe('YAML files', () => {
  const yamlFiles = [...yamlFilesUnder(K8S_DIR), COMPOSE_FILE];

  it.each(yamlFiles.map((path) => [relative(ROOT, path), path]))('%s parses', (_name, path) => {
    const { values, errors } = parseFile(path);
    expect(errors).toEqual([]);
    expect(values.length).toBeGreaterThan(0);
  });
});

describe('rendering', () => {
  itWithTool('the built-in renderer gives the same objects as the installed tool, for base, production and production-split-edge', () => {
    for (const dir of [BASE_DIR, PRODUCTION_DIR, SPLIT_EDGE_DIR]) {
      expect(sortById(renderKustomization(dir))).toEqual(sortById(renderWithTool(tool!, dir)));
    }
  });

  describe('built-in renderer on a small kustomization', () => {
    let dir: string;
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'kustomize-fixture-'));
      write(
        'base/kustomization.yaml',
        'resources: [app.yaml]\nnamespace: one\nlabels:\n  - pairs: { team: a }\n    includeSelectors: false\n    includeTemplates: true\n' +
          'images:\n  - name: example/app\n    newTag: "1"\n',
      );
      write(
        'base/app.yaml',
        [
          'apiVersion: apps/v1',
          'kind: Deployment',
          'metadata: { name: app }',
          'spec:',
          '  selector: { matchLabels: { app: app } }',
          '  template:',
          '    metadata: { labels: { app: app } }',
          '    spec:',
          '      containers:',
          '        - name: main',
          '          image: example/app:0',
          '          env: [{ name: A, value: "1" }, { name: B, value: "2" }]',
          '          resources: { requests: { cpu: 100m } }',
          '        - name: side',
          '          image: example/side:0',
          '---',
          'apiVersion: autoscaling/v2',
          'kind: HorizontalPodAutoscaler',
          'metadata: { name: app }',
          'spec:',
          '  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: app }',
          '  maxReplicas: 3',
          '  metrics: [{ type: Resource, resource: { name: cpu, target: { type: Utilization, averageUtilization: 50 } } }]',
          '---',
          'apiVersion: v1',
          'kind: Secret',
          'metadata: { name: placeholder }',
          'stringData: { K: v }',
        ].join('\n'),
      );
      write(
        'overlay/kustomization.yaml',
        [
          'resources: [../base, extra.yaml]',
          'namespace: one',
          'images: [{ name: example/app, newName: registry.example/app, newTag: "2" }]',
          'patches:',
          '  - path: deployment.patch.yaml',
          '  - target: { kind: Secret }',
          '    patch: |-',
          '      $patch: delete',
          '      apiVersion: v1',
          '      kind: Secret',
          '      metadata: { name: any }',
          '  - target: { kind: HorizontalPodAutoscaler, name: app }',
          '    patch: |-',
          '      - { op: replace, path: /spec/maxReplicas, value: 9 }',
          '      - { op: add, path: /spec/minReplicas, value: 2 }',
        ].join('\n'),
      );
      write(
        'overlay/deployment.patch.yaml',
        [
          'apiVersion: apps/v1',
          'kind: Deployment',
          'metadata: { name: app }',
          'spec:',
          '  template:',
          '    spec:',
          '      containers:',
          '        - name: main',
          '          env: [{ name: B, value: "3" }, { name: C, value: "4" }]',
          '          resources: { requests: { memory: 64Mi } }',
        ].join('\n'),
      );
      write('overlay/extra.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: extra }\ndata: { x: "1" }\n');
    });

    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const expected = [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'app', namespace: 'one', labels: { team: 'a' } },
        spec: {
          selector: { matchLabels: { app: 'app' } },
          template: {
            metadata: { labels: { app: 'app', team: 'a' } },
            spec: {
              containers: [
                {
                  name: 'main',
                  image: 'registry.example/app:2',
                  // kustomize's order: the patch's elements first, then the ones it does not name.
                  env: [
                    { name: 'B', value: '3' },
                    { name: 'C', value: '4' },
                    { name: 'A', value: '1' },
                  ],
                  resources: { requests: { cpu: '100m', memory: '64Mi' } },
                },
                { name: 'side', image: 'example/side:0' },
              ],
            },
          },
        },
      },
      {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'app', namespace: 'one', labels: { team: 'a' } },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'app' },
          minReplicas: 2,
          maxReplicas: 9,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
        },
      },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extra', namespace: 'one' }, data: { x: '1' } },
    ] as KubeObject[];

    it('applies resources, namespace, labels, images, merge patches (by name), deletions and JSON patches', () => {
      expect(sortById(renderKustomization(join(dir, 'overlay')))).toEqual(sortById(expected));
    });

    itWithTool('and the installed tool renders the same fixture identically', () => {
      expect(sortById(renderWithTool(tool!, join(dir, 'overlay')))).toEqual(sortById(expected));
    });

    it('refuses a kustomization field it does not implement, naming it', () => {
      write('unsupported/kustomization.yaml', 'resources: []\ncommonLabels: { a: b }\n');
      expect(() => renderKustomization(join(dir, 'unsupported'))).toThrow(/commonLabels/);
    });

    describe('one app run twice (name suffix, labels on selectors, deletion by a label that is absent)', () => {
      beforeAll(() => {
        write(
          'twice/app/app.yaml',
          [
            'apiVersion: apps/v1',
            'kind: Deployment',
            'metadata: { name: app, labels: { app: app } }',
            'spec:',
            '  selector: { matchLabels: { app: app } }',
            '  template:',
            '    metadata: { labels: { app: app } }',
            '    spec:',
            '      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: h, whenUnsatisfiable: ScheduleAnyway, labelSelector: { matchLabels: { app: app } } }]',
            '      containers: [{ name: main, image: example/app:0 }]',
            '---',
            'apiVersion: v1',
            'kind: Service',
            'metadata: { name: app, labels: { app: app } }',
            'spec: { selector: { app: app }, ports: [{ name: http, port: 80 }] }',
            '---',
            'apiVersion: autoscaling/v2',
            'kind: HorizontalPodAutoscaler',
            'metadata: { name: app, labels: { app: app } }',
            'spec: { scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: app }, maxReplicas: 3 }',
            '---',
            'apiVersion: policy/v1',
            'kind: PodDisruptionBudget',
            'metadata: { name: app, labels: { app: app } }',
            'spec: { maxUnavailable: 1, selector: { matchLabels: { app: app } } }',
          ].join('\n'),
        );
        write('twice/app/kustomization.yaml', 'resources: [app.yaml]\n');
        write('twice/a/kustomization.yaml', 'resources: [../app]\nnameSuffix: -a\nlabels:\n  - pairs: { part: a }\n    includeSelectors: true\n');
        write(
          'twice/kustomization.yaml',
          [
            'resources: [app, a]',
            'patches:',
            '  - target: { labelSelector: "app=app,!part" }',
            '    patch: |-',
            '      $patch: delete',
            '      apiVersion: apps/v1',
            '      kind: Deployment',
            '      metadata: { name: any }',
          ].join('\n'),
        );
      });

      const both = { app: 'app', part: 'a' };
      const expected = [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'app-a', labels: both },
          spec: {
            selector: { matchLabels: both },
            template: {
              metadata: { labels: both },
              spec: {
                topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'h', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: both } }],
                containers: [{ name: 'main', image: 'example/app:0' }],
              },
            },
          },
        },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'app-a', labels: both }, spec: { selector: both, ports: [{ name: 'http', port: 80 }] } },
        {
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: 'app-a', labels: both },
          spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'app-a' }, maxReplicas: 3 },
        },
        {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name: 'app-a', labels: both },
          spec: { maxUnavailable: 1, selector: { matchLabels: both } },
        },
      ] as KubeObject[];

      it('renames and relabels the copy, points its autoscaler at its Deployment, and deletes only the original', () => {
        expect(sortById(renderKustomization(join(dir, 'twice')))).toEqual(sortById(expected));
      });

      itWithTool('and the installed tool renders it identically', () => {
        expect(sortById(renderWithTool(tool!, join(dir, 'twice')))).toEqual(sortById(expected));
      });
    });
  });
});

describe('schema validation', () => {
  const find = (kind: string) => structuredClone(rendered.production.objects.find((object) => object.kind === kind)!) as any;

  it('refuses a misspelt field at any depth, in built-in kinds and in custom resources', () => {
    const deployment = find('Deployment');
    deployment.spec.replcas = 2;
    deployment.spec.template.spec.containers[0].ports[0].contianerPort = 8080;
    const scaledObject = find('ScaledObject');
    scaledObject.spec.minReplicaCont = 1;
    expect(schemaErrors(deployment)).toEqual([
      expect.stringMatching(/spec\.template\.spec\.containers\[0\]\.ports\[0\]\.contianerPort is not a field of apps\/v1 Deployment$/),
      expect.stringMatching(/spec\.replcas is not a field/),
    ]);
    expect(schemaErrors(scaledObject)).toEqual([expect.stringMatching(/spec\.minReplicaCont is not a field of keda\.sh\/v1alpha1 ScaledObject$/)]);
  });

  it('refuses a wrong type or a missing required field, and accepts any key in a map', () => {
    const deployment = find('Deployment');
    deployment.spec.template.metadata.labels['example.com/anything'] = 'yes';
    expect(schemaErrors(deployment)).toEqual([]);
    deployment.spec.replicas = 'two';
    delete deployment.spec.selector;
    expect(schemaErrors(deployment)).toEqual([expect.stringMatching(/selector.*replicas|replicas.*selector/)]);
  });

  it('refuses a kind it has no schema for, rather than passing it unchecked', () => {
    const object = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } } as KubeObject;
    expect(schemaErrors(object)).toEqual([expect.stringContaining('no schema for example.com/v1 Widget')]);
  });
});

/** The Deployments each variant runs: the base one per app; production a router per family group; the split edge an edge per family too. */
const ROUTER_GROUPS: Record<string, string> = {
  'inference-router-text': 'text',
  'inference-router-embeddings': 'embeddings,moderations',
  'inference-router-images': 'images,audio',
  'inference-router-decisions': 'decisions',
};
const EDGE_GROUPS = ['edge-gateway-text', 'edge-gateway-embeddings', 'edge-gateway-images', 'edge-gateway-decisions', 'edge-gateway-default'];
const PRODUCTION_DEPLOYMENTS = [...APPS.filter((app) => app !== 'inference-router'), ...Object.keys(ROUTER_GROUPS)];
const VARIANTS = [
  ['base', rendered.base.objects, [...APPS]],
  ['production', rendered.production.objects, PRODUCTION_DEPLOYMENTS],
  ['production-split-edge', rendered.splitEdge.objects, [...PRODUCTION_DEPLOYMENTS.filter((name) => name !== 'edge-gateway'), ...EDGE_GROUPS]],
] as const;

/** The endpoint families of the router (`RouterFamilies`), read from the contracts lib (deploy may not import libs). */
const ROUTER_FAMILIES = (/RouterFamilies = \[([^\]]+)\]/.exec(readFileSync(join(ROOT, 'libs', 'contracts', 'src', 'subjects.ts'), 'utf8'))?.[1] ?? '')
  .split(',')
  .map((item) => item.trim().replace(/^'|'$/g, ''))
  .filter(Boolean);

describe.each(VARIANTS)('k8s %s (rendered)', (variant, objects, deploymentNames) => {
  const ofKind = <T extends KubeObject>(kind: string) => objects.filter((object) => object.kind === kind) as T[];
  const deployments = ofKind<Workload>('Deployment');
  const deployment = (name: string) => deployments.find((object) => object.metadata.name === name)!;
  const container = (name: string) => deployment(name).spec.template.spec.containers[0];
  /** The app a Deployment runs (several Deployments may run one app, each serving a part of its work). */
  const appOf = (name: string) => deployment(name).spec.template.metadata!.labels!['app.kubernetes.io/name'] as App;
  const deploymentsOf = (app: App) => deployments.filter((object) => appOf(object.metadata.name) === app).map((object) => object.metadata.name);
  const envOf = (name: string, variable: string) => container(name).env?.find((entry) => entry.name === variable)?.value;
  const hpas = ofKind<Hpa>('HorizontalPodAutoscaler');
  const hpaOf = (name: string) => hpas.find((hpa) => hpa.spec.scaleTargetRef.name === name);
  const scaledObjects = ofKind<ScaledObject>('ScaledObject');
  const config = ofKind<ConfigMap>('ConfigMap').find((object) => object.metadata.name === 'gateway-config')!;
  const servingPort = (app: App) => Number(app === 'edge-gateway' ? config.data.PORT : config.data.HEALTH_PORT);
  const portNumber = (name: string, port: string | number | undefined) =>
    typeof port === 'number' ? port : container(name).ports?.find((candidate) => candidate.name === port)?.containerPort;
  const minimumReplicas = (name: string) =>
    deployment(name).spec.replicas ??
    hpaOf(name)?.spec.minReplicas ??
    scaledObjects.find((object) => object.spec.scaleTargetRef.name === name)?.spec.minReplicaCount ??
    1;
  const podLabels = (name: string) => deployment(name).spec.template.metadata!.labels!;

  it.each(objects.map((object) => [`${object.kind} ${object.metadata.name}`, object]))('%s matches its API schema, with no unknown field', (_id, object) => {
    expect(schemaErrors(object)).toEqual([]);
  });

  it('runs every app, everything in the model-gateway namespace and labelled part-of', () => {
    expect(deployments.map((object) => object.metadata.name).sort()).toEqual([...deploymentNames].sort());
    expect([...new Set(deployments.map((object) => appOf(object.metadata.name)))].sort()).toEqual([...APPS].sort());
    for (const object of objects) {
      if (object.kind !== 'Namespace') expect([object.kind, object.metadata.namespace]).toEqual([object.kind, NAMESPACE]);
      expect(object.metadata.labels?.['app.kubernetes.io/part-of']).toBe('model-gateway');
    }
  });

  it("gives no two Deployments a selector that matches the other's pods (each autoscaler and budget counts its own)", () => {
    for (const one of deployments) {
      for (const other of deployments) {
        if (one === other) continue;
        expect([one.metadata.name, other.metadata.name, matches(one.spec.selector!, podLabels(other.metadata.name))]).toEqual([
          one.metadata.name,
          other.metadata.name,
          false,
        ]);
      }
    }
  });

  describe.each(deploymentNames.map((name) => [name]))('%s', (name) => {
    const app = () => appOf(name);

    it('selects its own pods (its instance, when the app runs in several Deployments) and runs as the image user, never root', () => {
      const { spec } = deployment(name);
      const expected = name === app() ? { 'app.kubernetes.io/name': app() } : { 'app.kubernetes.io/name': app(), 'app.kubernetes.io/instance': name };
      expect(spec.selector?.matchLabels).toEqual(expected);
      expect(spec.template.metadata?.labels).toEqual(expect.objectContaining(expected));
      expect(spec.template.spec.securityContext).toEqual(expect.objectContaining({ runAsNonRoot: true, runAsUser: 1000 }));
    });

    it('probes /healthz (startup, liveness) and /readyz (readiness) on the port the app serves them on', () => {
      const { startupProbe, livenessProbe, readinessProbe } = container(name);
      expect(readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(startupProbe?.httpGet?.path).toBe('/healthz');
      for (const probe of [startupProbe, livenessProbe, readinessProbe]) {
        expect(portNumber(name, probe?.httpGet?.port)).toBe(servingPort(app()));
      }
      // Generous: NATS, the catalog and the database may take a while after a cluster-wide restart.
      expect((startupProbe!.periodSeconds ?? 10) * (startupProbe!.failureThreshold ?? 3)).toBeGreaterThanOrEqual(60);
    });

    it('requests CPU and memory and caps memory, with requests within limits', () => {
      for (const { resources } of [...(deployment(name).spec.template.spec.initContainers ?? []), container(name)]) {
        expect(resources?.requests).toEqual(expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }));
        expect(resources?.limits?.memory).toEqual(expect.any(String));
        for (const resource of ['cpu', 'memory'])
          if (resources?.limits?.[resource]) {
            expect(quantity(resources.requests![resource])).toBeLessThanOrEqual(quantity(resources.limits[resource]));
          }
      }
    });

    it('announces /metrics for Prometheus on the port that serves it', () => {
      expect(deployment(name).spec.template.metadata?.annotations).toEqual(
        expect.objectContaining({
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': String(servingPort(app())),
          'prometheus.io/path': '/metrics',
        }),
      );
    });

    it('reads gateway-config and exactly the secrets it uses, each of which the base defines', () => {
      const { env = [], envFrom = [] } = container(name);
      expect(envFrom.flatMap((source) => (source.configMapRef ? [source.configMapRef.name] : []))).toEqual(['gateway-config']);
      const fromSecrets = [
        ...env.flatMap(({ name: variable, valueFrom }) => {
          if (!valueFrom?.secretKeyRef) return [];
          // Each variable comes from the secret key of the same name.
          expect(valueFrom.secretKeyRef.key).toBe(variable);
          expect(secretKeys(valueFrom.secretKeyRef.name)).toContain(valueFrom.secretKeyRef.key);
          return [variable];
        }),
        ...envFrom.flatMap((source) => {
          if (!source.secretRef) return [];
          expect(secretKeys(source.secretRef.name)).toBeDefined();
          return secretKeys(source.secretRef.name)!;
        }),
      ];
      expect(fromSecrets.sort()).toEqual([...SECRET_ENV[app()]].sort());
    });

    it('has a disruption budget when it runs more than one replica, and none that blocks a node drain', () => {
      const budgets = ofKind<Pdb>('PodDisruptionBudget').filter((pdb) => matches(pdb.spec.selector, podLabels(name)));
      if (minimumReplicas(name) > 1) expect(budgets).toHaveLength(1);
      for (const { spec } of budgets) {
        const allowed = spec.maxUnavailable !== undefined ? Number(spec.maxUnavailable) : minimumReplicas(name) - Number(spec.minAvailable);
        expect(allowed).toBeGreaterThanOrEqual(1);
      }
    });
  });

  it('gives every disruption budget exactly one Deployment to guard', () => {
    for (const pdb of ofKind<Pdb>('PodDisruptionBudget')) {
      const guarded = deployments.filter((object) =>
        Object.entries(pdb.spec.selector.matchLabels).every(([key, value]) => object.spec.template.metadata?.labels?.[key] === value),
      );
      expect(guarded).toHaveLength(1);
    }
  });

  it('runs the migrations once per deploy from the migrate Job, never from a replica', () => {
    const command = (spec: PodSpec) => [...(spec.initContainers ?? []), ...spec.containers].flatMap((item) => [...(item.command ?? []), ...(item.args ?? [])]);
    const jobs = ofKind<Workload>('Job').filter((job) => command(job.spec.template.spec).includes(MIGRATION_ENTRYPOINT));
    expect(jobs.map((job) => job.metadata.name)).toEqual(['migrate']);
    expect(jobs[0].spec.template.spec.restartPolicy).toBe('Never');
    expect(jobs[0].spec.backoffLimit).toBeGreaterThan(0);
    expect(jobs[0].spec.template.spec.containers[0].env).toEqual([
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'gateway-database', key: 'DATABASE_URL' } } },
      { name: 'DATABASE_DIRECT_URL', valueFrom: { secretKeyRef: { name: 'gateway-database', key: 'DATABASE_DIRECT_URL', optional: true } } },
    ]);
    for (const object of deployments) expect(command(object.spec.template.spec).join(' ')).not.toContain('migrate');
  });

  it('leaves the replica count of every autoscaled Deployment to its autoscaler', () => {
    const targets = [...hpas.map((hpa) => hpa.spec.scaleTargetRef), ...scaledObjects.map((object) => object.spec.scaleTargetRef)];
    expect(new Set(targets.map((target) => target.name)).size).toBe(targets.length);
    for (const target of targets) {
      expect(target.kind ?? 'Deployment').toBe('Deployment');
      expect(deployment(target.name).spec).not.toHaveProperty('replicas');
    }
  });

  it('autoscales every edge-gateway and inference-router Deployment with an autoscaling/v2 HPA of at least two replicas', () => {
    expect(hpas.map((hpa) => hpa.spec.scaleTargetRef.name).sort()).toEqual([...deploymentsOf('edge-gateway'), ...deploymentsOf('inference-router')].sort());
    for (const hpa of hpas) {
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec.metrics).toContainEqual(expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }));
    }
  });

  if (variant === 'base') {
    it('keeps one router serving every endpoint family (ROUTER_FAMILIES unset: all of them)', () => {
      expect(deploymentsOf('inference-router')).toEqual(['inference-router']);
      expect(envOf('inference-router', 'ROUTER_FAMILIES')).toBeUndefined();
    });

    it('scales on CPU only, which needs nothing but metrics-server, and holds placeholder Secrets with latest images', () => {
      for (const hpa of hpas) expect(hpa.spec.metrics.map((metric) => metric.type)).toEqual(['Resource']);
      expect(scaledObjects).toEqual([]);
      expect(baseSecrets.map((secret) => secret.metadata.name).sort()).toEqual([
        'gateway-bootstrap',
        'gateway-database',
        'gateway-file-urls',
        'gateway-key-encryption',
        'gateway-object-store',
        'gateway-provider-keys',
        'gateway-reasoning-seal',
      ]);
      for (const object of deployments) expect(object.spec.template.spec.containers[0].image).toBe(`ghcr.io/model-gateway/${object.metadata.name}:latest`);
    });
  } else {
    it('scales edge-gateway and inference-router on CPU and on in-flight requests per pod', () => {
      for (const hpa of hpas) {
        expect(hpa.spec.metrics).toContainEqual(
          expect.objectContaining({ type: 'Pods', pods: expect.objectContaining({ metric: expect.objectContaining({ name: 'gateway_inflight_requests' }) }) }),
        );
      }
    });

    it('runs a router Deployment per family group (text; embeddings and moderations; images and audio; decisions), each family served once', () => {
      expect(ROUTER_FAMILIES).toEqual(['text', 'embeddings', 'moderations', 'images', 'decisions', 'audio']);
      const routers = deploymentsOf('inference-router');
      expect(Object.fromEntries(routers.map((name) => [name, envOf(name, 'ROUTER_FAMILIES')]))).toEqual(ROUTER_GROUPS);
      const served = routers.flatMap((name) => envOf(name, 'ROUTER_FAMILIES')!.split(','));
      expect([...served].sort()).toEqual([...ROUTER_FAMILIES].sort());
    });

    it("scales each router on its own families' calls in flight (the gauge's `family` label) and CPU, with its own bounds", () => {
      for (const name of deploymentsOf('inference-router')) {
        const hpa = hpaOf(name)!;
        expect(hpa.metadata.name).toBe(name);
        const inflight = hpa.spec.metrics.find((metric) => metric.type === 'Pods')?.pods?.metric;
        expect(inflight?.name).toBe('gateway_inflight_requests');
        const selected = ROUTER_FAMILIES.filter((family) => inflight?.selector !== undefined && matches(inflight.selector, { family }));
        expect([name, selected.join(',')]).toEqual([name, envOf(name, 'ROUTER_FAMILIES')]);
      }
      // Tuned per family: not one autoscaler copied four times.
      const signals = deploymentsOf('inference-router').map((name) => JSON.stringify([hpaOf(name)!.spec.minReplicas, hpaOf(name)!.spec.metrics]));
      expect(new Set(signals).size).toBe(signals.length);
    });

    it('scales video-worker with KEDA on the BullMQ wait list of the video queue, VIDEO_CONCURRENCY jobs per replica', () => {
      expect(videoQueue).toBe('video-generation');
      expect(scaledObjects).toHaveLength(1);
      const [scaled] = scaledObjects;
      expect(scaled.apiVersion).toBe('keda.sh/v1alpha1');
      expect(scaled.spec.scaleTargetRef.name).toBe('video-worker');
      expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
      expect(scaled.spec.triggers).toHaveLength(1);
      const [{ type, metadata }] = scaled.spec.triggers;
      expect(type).toBe('redis');
      expect(metadata.listName).toBe(`bull:${videoQueue}:wait`);
      expect(metadata.listLength).toBe(config.data.VIDEO_CONCURRENCY);
      const redis = new URL(config.data.REDIS_URL);
      expect(metadata.address).toBe(`${redis.hostname}:${redis.port || 6379}`);
      expect(metadata.databaseIndex ?? '0').toBe(redis.pathname.replace('/', '') || '0');
    });

    it('renders no Secret (the operator creates them) and pins one release tag on every image', () => {
      expect(ofKind('Secret')).toEqual([]);
      const images = [...deployments, ...ofKind<Workload>('Job')].map((object) => object.spec.template.spec.containers[0].image!);
      const tags = new Set(images.map((image) => image.split(':')[1]));
      expect(tags.size).toBe(1);
      expect([...tags][0]).toMatch(/^\d+\.\d+\.\d+/);
    });
  }

  if (variant === 'production-split-edge') {
    it("routes each endpoint family's paths to its own edge Deployment through one Ingress, and every other /v1 path to the default edge", () => {
      const ingresses = ofKind<Ingress>('Ingress');
      expect(ingresses).toHaveLength(1);
      const [ingress] = ingresses;
      expect(ingress.apiVersion).toBe('networking.k8s.io/v1');
      const paths = ingress.spec.rules.flatMap((rule) => rule.http.paths);
      /** The Deployment a request path reaches: the longest matching Prefix path, its Service, the pods that Service selects. */
      const reached = (path: string) => {
        const route = paths
          .filter(({ path: prefix, pathType }) => pathType === 'Prefix' && (path === prefix || path.startsWith(`${prefix.replace(/\/$/, '')}/`)))
          .sort((a, b) => b.path.length - a.path.length)[0];
        if (!route) return undefined;
        const service = ofKind<Service>('Service').find((object) => object.metadata.name === route.backend.service.name);
        expect(service?.spec.ports.map((port) => port.name)).toContain(route.backend.service.port.name);
        const selected = deployments.filter((object) => matches({ matchLabels: service!.spec.selector }, podLabels(object.metadata.name)));
        expect(selected).toHaveLength(1);
        return selected[0].metadata.name;
      };
      // Every family of the router (a family added without a route here fails this test), with the paths clients call.
      const FAMILY_PATHS: Record<string, { edge: string; paths: string[] }> = {
        text: {
          edge: 'edge-gateway-text',
          paths: [
            '/v1/chat/completions',
            '/v1/responses',
            '/v1/responses/resp_1',
            '/v1/responses/resp_1/input_items',
            '/v1/responses/input_tokens',
            '/v1/messages',
            '/v1/messages/count_tokens',
          ],
        },
        embeddings: { edge: 'edge-gateway-embeddings', paths: ['/v1/embeddings'] },
        moderations: { edge: 'edge-gateway-embeddings', paths: ['/v1/moderations'] },
        images: { edge: 'edge-gateway-images', paths: ['/v1/images/generations'] },
        decisions: { edge: 'edge-gateway-decisions', paths: ['/v1/systemone', '/v1/decisions'] },
        audio: { edge: 'edge-gateway-images', paths: ['/v1/audio/speech'] },
      };
      expect(Object.keys(FAMILY_PATHS)).toEqual(ROUTER_FAMILIES);
      for (const { edge, paths: familyPaths } of Object.values(FAMILY_PATHS)) {
        for (const path of familyPaths) expect([path, reached(path)]).toEqual([path, edge]);
      }
      for (const path of [
        '/v1/models',
        '/v1/auth/proxy',
        '/v1/auth/proxy/',
        '/v1/user/logs',
        '/v1/files/images/a.png',
        '/v1/videos/generations',
        '/v1/chatter',
      ]) {
        expect([path, reached(path)]).toEqual([path, 'edge-gateway-default']);
      }
      // The edges' probes and metrics share the API port: not routed.
      for (const path of ['/metrics', '/healthz', '/readyz']) expect([path, reached(path)]).toEqual([path, undefined]);
      expect(new Set(paths.map((path) => reached(path.path))).size).toBe(EDGE_GROUPS.length);
    });
  }

  describe('NetworkPolicies', () => {
    const policies = ofKind<KubeObject & NetworkPolicy>('NetworkPolicy');
    const pod = (name: string): PodUnderTest => ({
      namespace: NAMESPACE,
      labels: podLabels(name),
      ports: container(name).ports ?? [],
    });
    const namespaceLabels = (name: string) => ({ 'kubernetes.io/metadata.name': name });
    const internet: Peer = { external: true };
    const sameNamespace: Peer = { namespace: NAMESPACE, namespaceLabels: namespaceLabels(NAMESPACE), podLabels: { 'app.kubernetes.io/name': 'edge-gateway' } };
    const otherNamespace: Peer = { namespace: 'default', namespaceLabels: namespaceLabels('default'), podLabels: { app: 'anything' } };
    const monitoring: Peer = { namespace: 'monitoring', namespaceLabels: namespaceLabels('monitoring'), podLabels: { app: 'prometheus' } };

    it('denies ingress to every pod of the namespace by default', () => {
      const infrastructure: PodUnderTest = { namespace: NAMESPACE, labels: { 'app.kubernetes.io/name': 'nats' }, ports: [{ containerPort: 4222 }] };
      expect(allowsIngress(policies, infrastructure, internet, 4222)).toBe(false);
      expect(allowsIngress(policies, infrastructure, otherNamespace, 4222)).toBe(false);
      expect(allowsIngress(policies, infrastructure, sameNamespace, 4222)).toBe(true);
    });

    it('lets anyone reach every edge Deployment on its API port, and nothing else of it', () => {
      const port = servingPort('edge-gateway');
      for (const name of deploymentsOf('edge-gateway')) {
        for (const peer of [internet, otherNamespace, monitoring, sameNamespace])
          expect([name, allowsIngress(policies, pod(name), peer, port)]).toEqual([name, true]);
        expect(allowsIngress(policies, pod(name), internet, port + 1)).toBe(false);
      }
    });

    it.each(BACKENDS.map((app) => [app]))('%s (every Deployment of it): reachable from the namespace, and from monitoring on its health port only', (app) => {
      const port = servingPort(app);
      expect(deploymentsOf(app).length).toBeGreaterThan(0);
      for (const name of deploymentsOf(app)) {
        expect([name, allowsIngress(policies, pod(name), sameNamespace, port)]).toEqual([name, true]);
        expect([name, allowsIngress(policies, pod(name), monitoring, port)]).toEqual([name, true]);
        expect(allowsIngress(policies, pod(name), monitoring, 5432)).toBe(false);
        expect(allowsIngress(policies, pod(name), internet, port)).toBe(false);
        expect(allowsIngress(policies, pod(name), otherNamespace, port)).toBe(false);
      }
    });
  });
});

describe('docker/compose.yaml', () => {
  interface ComposeService {
    image?: string;
    build?: { args?: Record<string, string> };
    command?: string[];
    environment?: Record<string, string>;
    depends_on?: Record<string, { condition: string }>;
    healthcheck?: { test: string[] };
    ports?: string[];
    volumes?: string[];
    restart?: string;
  }
  const compose = parseFile(COMPOSE_FILE).values[0] as { services: Record<string, ComposeService>; volumes?: Record<string, unknown> };
  const services = compose.services;
  const ONE_SHOTS = ['migrate', 'bootstrap'];
  /** `${NAME:-default}` as Compose resolves it with NAME unset. */
  const resolved = (value: string | undefined) => value?.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');
  const env = (service: string, name: string) => resolved(services[service].environment?.[name]);
  const REQUIRED_ENV: Record<App, string[]> = {
    'edge-gateway': ['NATS_URL', 'REDIS_URL', 'PORT', 'FILE_URL_SECRET', 'OBJECT_STORE_DIR', 'MODELS_CONFIG'],
    'inference-router': ['NATS_URL', 'HEALTH_PORT', 'REDIS_URL', 'OBJECT_STORE_DIR', 'MODELS_CONFIG', 'REASONING_SEAL_KEY', ...PROVIDER_KEYS],
    'key-service': ['NATS_URL', 'HEALTH_PORT', 'DATABASE_URL', 'KEY_ENCRYPTION_KEY'],
    'account-service': ['NATS_URL', 'HEALTH_PORT', 'DATABASE_URL'],
    'metering-service': ['NATS_URL', 'HEALTH_PORT', 'DATABASE_URL', 'REDIS_URL', 'MODELS_CONFIG'],
    'video-worker': ['NATS_URL', 'HEALTH_PORT', 'REDIS_URL', 'OBJECT_STORE_DIR', ...PROVIDER_KEYS],
  };

  it('runs every app, the infrastructure and the one-shot jobs', () => {
    expect(Object.keys(services).sort()).toEqual([...APPS, 'nats', 'redis', 'postgres', ...ONE_SHOTS].sort());
    expect(services.nats.command).toContain('-js');
  });

  it.each(APPS.map((app) => [app]))('%s is built from the Dockerfile with a matching APP and has what its env requires', (app) => {
    expect(services[app].build?.args?.APP).toBe(app);
    for (const name of REQUIRED_ENV[app]) expect([name, services[app].environment?.[name]]).toEqual([name, expect.any(String)]);
    for (const name of ['NATS_URL', 'REDIS_URL', 'DATABASE_URL']) {
      const url = env(app, name);
      if (url) expect(Object.keys(services)).toContain(new URL(url).hostname);
    }
  });

  it('gives key-service a 32-byte encryption key, the edge a file URL secret of 32+ characters and the router a 32-byte seal key by default', () => {
    expect(env('key-service', 'KEY_ENCRYPTION_KEY')).toMatch(/^[0-9a-f]{64}$/);
    expect(env('bootstrap', 'KEY_ENCRYPTION_KEY')).toBe(env('key-service', 'KEY_ENCRYPTION_KEY'));
    expect(env('edge-gateway', 'FILE_URL_SECRET')!.length).toBeGreaterThanOrEqual(32);
    expect(Buffer.from(env('inference-router', 'REASONING_SEAL_KEY')!, 'base64')).toHaveLength(32);
  });

  it('health-checks each long-running service on the port it serves /readyz on', () => {
    for (const name of [...APPS, 'nats', 'redis', 'postgres']) expect([name, services[name].healthcheck?.test]).toEqual([name, expect.any(Array)]);
    for (const app of APPS) {
      const port = app === 'edge-gateway' ? env(app, 'PORT') : env(app, 'HEALTH_PORT');
      expect(services[app].healthcheck!.test.join(' ')).toContain(`127.0.0.1:${port}/readyz`);
    }
  });

  it('has dependencies that exist, wait in a way each dependency supports, and form no cycle', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(Object.keys(services)).toContain(dependency);
        if (condition === 'service_healthy') expect([dependency, services[dependency].healthcheck]).toEqual([dependency, expect.anything()]);
        else if (condition === 'service_completed_successfully') expect([name, dependency, services[dependency].restart]).toEqual([name, dependency, 'no']);
        else expect(condition).toBe('service_started');
      }
    }
    const order: string[] = [];
    const visiting = new Set<string>();
    const visit = (name: string) => {
      if (order.includes(name)) return;
      if (visiting.has(name)) throw new Error(`dependency cycle through ${name}`);
      visiting.add(name);
      Object.keys(services[name].depends_on ?? {}).forEach(visit);
      visiting.delete(name);
      order.push(name);
    };
    Object.keys(services).forEach(visit);
    expect(order).toHaveLength(Object.keys(services).length);
  });

  it('migrates once, before everything that uses PostgreSQL', () => {
    expect(services.migrate.command).toContain(MIGRATION_ENTRYPOINT);
    const usersOfPostgres = Object.keys(services).filter((name) => name !== 'migrate' && services[name].environment?.DATABASE_URL);
    expect(usersOfPostgres.sort()).toEqual(['account-service', 'bootstrap', 'key-service', 'metering-service']);
    for (const name of usersOfPostgres) {
      expect(services[name].depends_on?.migrate).toEqual({ condition: 'service_completed_successfully' });
    }
    for (const app of APPS) expect([...(services[app].command ?? [])].join(' ')).not.toContain('migrate');
  });

  it('publishes the edge, and only the edge, on port 8080', () => {
    expect(services['edge-gateway'].ports).toEqual(['8080:8080']);
    for (const name of Object.keys(services).filter((service) => service !== 'edge-gateway')) expect([name, services[name].ports]).toEqual([name, undefined]);
  });

  it('shares one object-store volume between the router, video-worker and edge, at OBJECT_STORE_DIR', () => {
    const users = Object.keys(services).filter((name) => services[name].environment?.OBJECT_STORE_DIR);
    expect(users.sort()).toEqual(['edge-gateway', 'inference-router', 'video-worker']);
    const mounts = users.map((name) => {
      expect(env(name, 'OBJECT_STORE') ?? 'filesystem').toBe('filesystem');
      const mount = (services[name].volumes ?? []).find((volume) => volume.endsWith(`:${env(name, 'OBJECT_STORE_DIR')}`));
      expect([name, mount]).toEqual([name, expect.any(String)]);
      return mount!;
    });
    expect(new Set(mounts).size).toBe(1);
    expect(Object.keys(compose.volumes ?? {})).toContain(mounts[0].split(':')[0]);
  });

  it('creates the object-store directory in the image, owned by the user the apps run as', () => {
    const dockerfile = readFileSync(DOCKERFILE, 'utf8');
    const directory = env('edge-gateway', 'OBJECT_STORE_DIR')!;
    const user = /^USER (\d+):(\d+)$/m.exec(dockerfile);
    expect(user?.[1]).toBe('1000');
    expect(dockerfile).toMatch(new RegExp(`^RUN mkdir -p ${directory} && chown ${user![1]}:${user![2]} ${directory}$`, 'm'));
    expect(dockerfile.indexOf(`mkdir -p ${directory}`)).toBeLessThan(dockerfile.indexOf(user![0]));
  });
});

/** The operator's documentation. */
function operationsDoc(): string {
  return readFileSync(OPERATIONS_DOC, 'utf8');
}

describe('operations documentation', () => {
  const operations = operationsDoc();
  const missing = (needles: string[], text: string) => needles.filter((needle) => !text.includes(needle));

  it('names every Secret the production overlay expects the operator to create', () => {
    expect(operations).not.toBe('');
    expect(
      missing(
        baseSecrets.map((secret) => `\`${secret.metadata.name}\``),
        operations,
      ),
    ).toEqual([]);
  });

  it('lists the metrics the autoscalers use in its metrics table, and says KEDA is needed', () => {
    const metricsTable = operations.slice(operations.search(/^\| metric\s*\|/m));
    const autoscalerMetrics = ['gateway_inflight_requests', 'gateway_video_queue_depth', 'gateway_metering_pending_events'];
    expect(
      missing(
        autoscalerMetrics.map((name) => `| \`${name}\``),
        metricsTable,
      ),
    ).toEqual([]);
    expect(missing(['KEDA'], operations)).toEqual([]);
  });
});
