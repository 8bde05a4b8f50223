import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/**
 * Renders a kustomization for the deployment tests: with `kustomize` or `kubectl kustomize` (kubectl
 * 1.27 or later) when one is on PATH, otherwise with the small renderer below, which covers exactly
 * the features k8s/ uses and refuses anything else (an unknown field or patch directive is an error,
 * never ignored). Where a tool is installed, the tests check that both renderers agree on k8s/.
 */

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface Rendered {
  objects: KubeObject[];
  renderer: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const TOOLS: { command: string; args: (dir: string) => string[]; usable: () => boolean }[] = [
  { command: 'kustomize', args: (dir) => ['build', dir], usable: () => spawnSync('kustomize', ['version'], { stdio: 'ignore', timeout: 30_000 }).status === 0 },
  { command: 'kubectl', args: (dir) => ['kustomize', dir], usable: kubectlIsRecentEnough },
];

/**
 * kubectl bundles kustomize; from 1.27 on it bundles kustomize v5, which renders k8s/ as a
 * current kustomize does. An older kubectl is passed over for the built-in renderer.
 */
function kubectlIsRecentEnough(): boolean {
  const result = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 });
  if (result.error || result.status !== 0) return false;
  try {
    const { major, minor } = (JSON.parse(result.stdout) as { clientVersion: { major: string; minor: string } }).clientVersion;
    return Number.parseInt(major, 10) > 1 || (Number.parseInt(major, 10) === 1 && Number.parseInt(minor, 10) >= 27);
  } catch {
    return false;
  }
}

/** The first usable kustomize-capable tool on PATH, if any. */
export function installedTool(): string | undefined {
  return TOOLS.find(({ usable }) => usable())?.command;
}

export function renderWithTool(command: string, dir: string): KubeObject[] {
  const tool = TOOLS.find((candidate) => candidate.command === command)!;
  const result = spawnSync(tool.command, tool.args(dir), { encoding: 'utf8', timeout: 120_000 });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${tool.command} ${tool.args(dir).join(' ')} failed:\n${result.stderr}`);
  return parseDocuments(result.stdout, `${command} output`) as KubeObject[];
}

export function render(dir: string): Rendered {
  const tool = installedTool();
  return tool ? { objects: renderWithTool(tool, dir), renderer: tool } : { objects: renderKustomization(dir), renderer: 'built-in' };
}

// ------------------------------------------------------------------------------------------------
// The built-in renderer
// ------------------------------------------------------------------------------------------------

interface LabelsEntry {
  pairs: Record<string, string>;
  includeSelectors?: boolean;
  includeTemplates?: boolean;
}
interface ImageEntry {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}
interface PatchTarget {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
}
interface PatchEntry {
  path?: string;
  patch?: string;
  target?: PatchTarget;
}
interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  namespace?: string;
  nameSuffix?: string;
  labels?: LabelsEntry[];
  images?: ImageEntry[];
  patches?: PatchEntry[];
}

const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'nameSuffix', 'labels', 'images', 'patches']);
const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'PersistentVolume',
  'StorageClass',
  'PriorityClass',
  'IngressClass',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
]);
// Workloads whose pod template gets the labels of a `labels` entry with includeTemplates.
const TEMPLATE_PATHS: Record<string, string[][]> = {
  Deployment: [['spec', 'template']],
  StatefulSet: [['spec', 'template']],
  DaemonSet: [['spec', 'template']],
  ReplicaSet: [['spec', 'template']],
  Job: [['spec', 'template']],
  CronJob: [
    ['spec', 'jobTemplate'],
    ['spec', 'jobTemplate', 'spec', 'template'],
  ],
};

function parseDocuments(text: string, source: string): Json[] {
  return parseAllDocuments(text).flatMap((document) => {
    if (document.errors.length > 0) throw new Error(`${source}: ${document.errors[0].message}`);
    const value = document.toJS() as Json;
    return value === null || value === undefined ? [] : [value];
  });
}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

const idOf = (object: KubeObject) => `${object.kind}/${object.metadata.namespace ?? '~'}/${object.metadata.name}`;

/** Renders the kustomization in `dir` (a directory holding kustomization.yaml). */
export function renderKustomization(dir: string): KubeObject[] {
  const file = KUSTOMIZATION_FILES.map((name) => join(dir, name)).find((path) => existsSync(path));
  if (!file) throw new Error(`no kustomization file in ${dir}`);
  const kustomization = (parse(readFileSync(file, 'utf8')) ?? {}) as Kustomization;
  const unsupported = Object.keys(kustomization).filter((field) => !SUPPORTED_FIELDS.has(field));
  if (unsupported.length > 0) throw new Error(`${file}: unsupported by the built-in renderer: ${unsupported.join(', ')}`);

  let objects = (kustomization.resources ?? []).flatMap((entry) => loadResource(dir, entry));
  const seen = new Set<string>();
  for (const object of objects) {
    if (seen.has(idOf(object))) throw new Error(`${file}: ${idOf(object)} is defined twice`);
    seen.add(idOf(object));
  }
  // kustomize's order of the built-in transformers: patches, namespace, name suffix, labels, images.
  for (const entry of kustomization.patches ?? []) objects = applyPatchEntry(objects, entry, dir);
  if (kustomization.namespace) {
    for (const object of objects) {
      if (!CLUSTER_SCOPED.has(object.kind)) object.metadata.namespace = kustomization.namespace;
    }
  }
  if (kustomization.nameSuffix) applyNameSuffix(objects, kustomization.nameSuffix, file);
  for (const entry of kustomization.labels ?? []) applyLabels(objects, entry, file);
  for (const image of kustomization.images ?? []) applyImage(objects, image);
  return objects;
}

function loadResource(dir: string, entry: string): KubeObject[] {
  if (/^[a-z]+:\/\//.test(entry) || entry.startsWith('github.com/')) {
    throw new Error(`remote resource ${entry}: unsupported by the built-in renderer`);
  }
  const path = resolve(dir, entry);
  if (statSync(path).isDirectory()) return renderKustomization(path);
  return parseDocuments(readFileSync(path, 'utf8'), path).map((value) => {
    const object = value as unknown as KubeObject;
    if (!object.kind || !object.metadata?.name) throw new Error(`${path}: a document without kind or metadata.name`);
    return object;
  });
}

// --- patches ------------------------------------------------------------------------------------

function applyPatchEntry(objects: KubeObject[], entry: PatchEntry, dir: string): KubeObject[] {
  if ((entry.path === undefined) === (entry.patch === undefined)) throw new Error('a patch needs exactly one of path and patch');
  const text = entry.path !== undefined ? readFileSync(resolve(dir, entry.path), 'utf8') : entry.patch!;
  const documents = parseDocuments(text, entry.path ?? 'inline patch');
  if (documents.length === 1 && Array.isArray(documents[0])) {
    if (!entry.target) throw new Error('a JSON 6902 patch needs a target');
    const operations = documents[0];
    for (const object of select(objects, entry.target)) applyJsonPatch(object as unknown as JsonObject, operations);
    return objects;
  }
  for (const document of documents) {
    if (!isObject(document)) throw new Error('a strategic merge patch must be an object');
    const targets = entry.target ? select(objects, entry.target) : select(objects, patchIdentity(document));
    if (targets.length === 0) throw new Error(`patch ${JSON.stringify(entry.target ?? patchIdentity(document))} matches nothing`);
    if (document.$patch === 'delete') {
      objects = objects.filter((object) => !targets.includes(object));
      continue;
    }
    if (document.$patch !== undefined) throw new Error(`unsupported $patch: ${String(document.$patch)}`);
    for (const target of targets) {
      const { metadata: patchMetadata, ...rest } = document;
      const patch: JsonObject = { ...rest };
      if (isObject(patchMetadata)) {
        // Under a target, the patch's own name and namespace only satisfy the schema.
        patch.metadata = Object.fromEntries(Object.entries(patchMetadata).filter(([key]) => key !== 'name' && key !== 'namespace'));
      }
      strategicMerge(target as unknown as JsonObject, patch, target.kind, []);
    }
  }
  return objects;
}

function patchIdentity(patch: JsonObject): PatchTarget {
  const metadata = isObject(patch.metadata) ? patch.metadata : {};
  if (typeof patch.kind !== 'string' || typeof metadata.name !== 'string') throw new Error('a patch needs kind and metadata.name');
  return {
    kind: patch.kind,
    name: metadata.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
  };
}

function select(objects: KubeObject[], target: PatchTarget): KubeObject[] {
  const unknown = Object.keys(target).filter((field) => !['group', 'version', 'kind', 'name', 'namespace', 'labelSelector'].includes(field));
  if (unknown.length > 0) throw new Error(`unsupported patch target fields: ${unknown.join(', ')}`);
  const labels = (target.labelSelector ?? '')
    .split(',')
    .filter(Boolean)
    .map((term) => {
      const absent = /^\s*!([^=!\s]+)\s*$/.exec(term);
      if (absent) return [absent[1], undefined] as const;
      const match = /^\s*([^=!\s]+)\s*=\s*([^=\s]*)\s*$/.exec(term);
      if (!match) throw new Error(`unsupported labelSelector term: ${term}`);
      return [match[1], match[2]] as const;
    });
  return objects.filter((object) => {
    const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
    return (
      (target.kind === undefined || target.kind === object.kind) &&
      (target.group === undefined || target.group === group) &&
      (target.version === undefined || target.version === version) &&
      (target.name === undefined || new RegExp(`^(?:${target.name})$`).test(object.metadata.name)) &&
      (target.namespace === undefined || target.namespace === object.metadata.namespace) &&
      // `!key` (value undefined): the label is absent.
      labels.every(([key, value]) => object.metadata.labels?.[key] === value)
    );
  });
}

const BUILT_IN_WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Pod', 'Service']);

/**
 * The list fields k8s/ patches that Kubernetes merges element by element (their patchMergeKey);
 * every other list is replaced whole, as Kubernetes does for lists without a merge key and for
 * custom resources.
 */
function mergeKey(kind: string, path: string[]): string | undefined {
  if (!BUILT_IN_WORKLOADS.has(kind)) return undefined;
  const field = path[path.length - 1];
  const parent = path[path.length - 3];
  if (['containers', 'initContainers', 'volumes', 'env', 'imagePullSecrets'].includes(field)) return 'name';
  if (field === 'volumeMounts') return 'mountPath';
  if (field === 'ports' && (parent === 'containers' || parent === 'initContainers')) return 'containerPort';
  if (field === 'ports' && kind === 'Service' && path.length === 2) return 'port';
  return undefined;
}

function strategicMerge(target: JsonObject, patch: JsonObject, kind: string, path: string[]): void {
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) throw new Error(`unsupported patch directive ${key} at ${[...path, key].join('.')}`);
    const here = [...path, key];
    if (value === null) {
      delete target[key];
    } else if (isObject(value)) {
      if (!isObject(target[key])) target[key] = {};
      strategicMerge(target[key] as JsonObject, value, kind, here);
    } else if (Array.isArray(value)) {
      const key_ = mergeKey(kind, here);
      const current = target[key];
      target[key] = key_ && Array.isArray(current) ? mergeList(current, value, key_, kind, here) : structuredClone(value);
    } else {
      target[key] = value;
    }
  }
}

/** As kustomize orders the result: the patch's elements (merged into their originals), then the
 * original elements the patch does not name, in their original order. */
function mergeList(current: Json[], patch: Json[], key: string, kind: string, path: string[]): Json[] {
  const remaining = structuredClone(current);
  const merged: Json[] = [];
  for (const element of patch) {
    if (!isObject(element) || element[key] === undefined) throw new Error(`${path.join('.')}: every element needs ${key}`);
    const index = remaining.findIndex((existing) => isObject(existing) && existing[key] === element[key]);
    const original = index >= 0 ? (remaining.splice(index, 1)[0] as JsonObject) : undefined;
    if (element.$patch === 'delete') continue;
    if (original) {
      strategicMerge(original, element, kind, [...path, String(merged.length)]);
      merged.push(original);
    } else {
      merged.push(structuredClone(element));
    }
  }
  return [...merged, ...remaining];
}

function applyJsonPatch(document: JsonObject, operations: Json[]): void {
  for (const operation of operations) {
    if (!isObject(operation) || typeof operation.path !== 'string') throw new Error('a JSON patch operation needs op and path');
    const tokens = operation.path
      .split('/')
      .slice(1)
      .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = tokens.pop()!;
    let parent: Json = document;
    for (const token of tokens) {
      parent = Array.isArray(parent) ? parent[Number(token)] : isObject(parent) ? parent[token] : undefined!;
      if (parent === undefined) throw new Error(`JSON patch path ${operation.path} does not exist`);
    }
    const container = parent as Json[] | JsonObject;
    switch (operation.op) {
      case 'add':
        if (Array.isArray(container)) container.splice(last === '-' ? container.length : Number(last), 0, structuredClone(operation.value));
        else container[last] = structuredClone(operation.value);
        break;
      case 'replace':
      case 'remove': {
        const exists = Array.isArray(container) ? Number(last) < container.length : last in container;
        if (!exists) throw new Error(`JSON patch path ${operation.path} does not exist`);
        if (operation.op === 'remove') {
          if (Array.isArray(container)) container.splice(Number(last), 1);
          else delete container[last];
        } else if (Array.isArray(container)) container[Number(last)] = structuredClone(operation.value);
        else container[last] = structuredClone(operation.value);
        break;
      }
      default:
        throw new Error(`unsupported JSON patch op ${String(operation.op)}`);
    }
  }
}

// --- labels and images --------------------------------------------------------------------------

/**
 * Where `includeSelectors` adds its labels besides metadata and pod templates, for the kinds k8s/
 * runs under such a label: a workload's selector and its pods' spread constraints, a Service's
 * selector, a disruption budget's. Any other kind holding a selector is refused.
 */
const SELECTOR_KINDS = new Set(['Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler']);

function addSelectorLabels(object: KubeObject, pairs: Record<string, string>, file: string): void {
  const spec = (isObject(object.spec) ? object.spec : {}) as JsonObject;
  const withPairs = (labels: Json | undefined): JsonObject => ({ ...(isObject(labels) ? labels : {}), ...pairs });
  if (!SELECTOR_KINDS.has(object.kind)) throw new Error(`${file}: labels with includeSelectors on a ${object.kind} are unsupported by the built-in renderer`);
  if (object.kind === 'Service') {
    spec.selector = withPairs(spec.selector);
  } else if (object.kind === 'Deployment' || object.kind === 'PodDisruptionBudget') {
    const selector = (isObject(spec.selector) ? spec.selector : (spec.selector = {})) as JsonObject;
    selector.matchLabels = withPairs(selector.matchLabels);
  }
  if (object.kind !== 'Deployment') return;
  const podSpec = isObject(spec.template) && isObject(spec.template.spec) ? spec.template.spec : {};
  if (podSpec.affinity !== undefined) throw new Error(`${file}: labels with includeSelectors on a pod affinity are unsupported by the built-in renderer`);
  for (const constraint of Array.isArray(podSpec.topologySpreadConstraints) ? podSpec.topologySpreadConstraints : []) {
    if (isObject(constraint) && isObject(constraint.labelSelector)) constraint.labelSelector.matchLabels = withPairs(constraint.labelSelector.matchLabels);
  }
}

/**
 * Appends the suffix to every object's name, and to the autoscalers' references to the objects
 * renamed (kustomize's name references, for the only kind of reference k8s/ renames).
 */
function applyNameSuffix(objects: KubeObject[], suffix: string, file: string): void {
  const renamed = new Map<string, string>();
  for (const object of objects) {
    if (!['Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler'].includes(object.kind)) {
      throw new Error(`${file}: nameSuffix on a ${object.kind} is unsupported by the built-in renderer`);
    }
    renamed.set(`${object.kind}/${object.metadata.name}`, `${object.metadata.name}${suffix}`);
    object.metadata.name = `${object.metadata.name}${suffix}`;
  }
  for (const object of objects) {
    const target = object.kind === 'HorizontalPodAutoscaler' && isObject(object.spec) ? object.spec.scaleTargetRef : undefined;
    if (isObject(target)) target.name = renamed.get(`${String(target.kind)}/${String(target.name)}`) ?? target.name;
  }
}

function applyLabels(objects: KubeObject[], entry: LabelsEntry, file: string): void {
  const unknown = Object.keys(entry).filter((field) => !['pairs', 'includeSelectors', 'includeTemplates'].includes(field));
  if (unknown.length > 0) throw new Error(`${file}: labels with ${unknown.join(', ')} are unsupported by the built-in renderer`);
  for (const object of objects) {
    object.metadata.labels = { ...object.metadata.labels, ...entry.pairs };
    if (entry.includeSelectors) addSelectorLabels(object, entry.pairs, file);
    if (!entry.includeTemplates && !entry.includeSelectors) continue;
    for (const path of TEMPLATE_PATHS[object.kind] ?? []) {
      const template = path.reduce<Json | undefined>((node, key) => (isObject(node) ? node[key] : undefined), object as unknown as Json);
      if (!isObject(template)) continue;
      const metadata = (isObject(template.metadata) ? template.metadata : (template.metadata = {})) as JsonObject;
      metadata.labels = { ...(isObject(metadata.labels) ? metadata.labels : {}), ...entry.pairs };
    }
  }
}

/** `registry/name:tag@digest` into its parts (a registry port is not a tag). */
function splitImage(image: string): { name: string; tag?: string; digest?: string } {
  const [withoutDigest, digest] = image.split('@') as [string, string | undefined];
  const colon = withoutDigest.lastIndexOf(':');
  const hasTag = colon > withoutDigest.lastIndexOf('/');
  return {
    name: hasTag ? withoutDigest.slice(0, colon) : withoutDigest,
    tag: hasTag ? withoutDigest.slice(colon + 1) : undefined,
    digest,
  };
}

function applyImage(objects: KubeObject[], entry: ImageEntry): void {
  const visit = (node: Json): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
        for (const container of value) {
          if (!isObject(container) || typeof container.image !== 'string') continue;
          const image = splitImage(container.image);
          if (image.name !== entry.name) continue;
          const name = entry.newName ?? image.name;
          if (entry.digest) container.image = `${name}@${entry.digest}`;
          else if (entry.newTag) container.image = `${name}:${entry.newTag}`;
          else container.image = `${name}${image.tag ? `:${image.tag}` : ''}${image.digest ? `@${image.digest}` : ''}`;
        }
      }
      visit(value);
    }
  };
  objects.forEach((object) => visit(object as unknown as Json));
}
