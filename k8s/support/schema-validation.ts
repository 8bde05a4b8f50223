import type { KubeObject } from './kustomize';

/**
 * Checks a rendered object against the Kubernetes API schema of its apiVersion and kind, with the
 * JSON-schema validators that kubernetes-models generates from the Kubernetes OpenAPI spec (and,
 * for custom resources, from the CRDs of the @kubernetes-models package named in CRD_MODELS).
 *
 * Those validators check types, enums, formats and required fields, but accept fields the schema
 * does not name, as the API server's lenient decoding does; `kubectl apply` (strict field
 * validation since 1.27) refuses them. To refuse them too, the object is validated through a proxy
 * that records which fields the validator looks up: a generated validator looks up every property
 * its schema defines and enumerates every map, so a field it never looked up in an object whose
 * schema has properties is one the schema does not define. Objects whose schema has no properties
 * (free-form, x-kubernetes-preserve-unknown-fields) are read as nothing and are not judged.
 */

/** API groups outside kubernetes-models, with the package that holds their models. */
const CRD_MODELS: Record<string, string> = {
  'keda.sh': '@kubernetes-models/keda',
};

interface ModelClass {
  prototype: { validate(this: unknown): void };
}

function modelFor(apiVersion: string, kind: string): ModelClass | undefined {
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  const modulePath = CRD_MODELS[group] ? `${CRD_MODELS[group]}/${apiVersion}` : `kubernetes-models/${apiVersion}`;
  let models: Record<string, ModelClass>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    models = require(modulePath);
  } catch {
    return undefined;
  }
  return models[kind];
}

/** Wraps `root` so that every field read through it is recorded against the object it belongs to. */
function recordReads(root: object): { proxy: object; reads: Map<object, Set<string>> } {
  const reads = new Map<object, Set<string>>();
  const proxies = new Map<object, object>();
  const wrap = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const existing = proxies.get(value);
    if (existing) return existing;
    if (!Array.isArray(value)) reads.set(value, new Set());
    const proxy = new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === 'string' && !Array.isArray(target)) reads.get(target)!.add(key);
        return wrap(Reflect.get(target, key, receiver));
      },
    });
    proxies.set(value, proxy);
    return proxy;
  };
  return { proxy: wrap(root) as object, reads };
}

function unknownFields(value: unknown, path: string, reads: Map<object, Set<string>>): string[] {
  if (Array.isArray(value)) return value.flatMap((element, index) => unknownFields(element, `${path}[${index}]`, reads));
  if (value === null || typeof value !== 'object') return [];
  const known = reads.get(value);
  if (!known || known.size === 0) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const childPath = path ? `${path}.${key}` : key;
    return known.has(key) ? unknownFields(child, childPath, reads) : [childPath];
  });
}

/** What is wrong with `object` by its API schema: nothing when the list is empty. */
export function schemaErrors(object: KubeObject): string[] {
  const id = `${object.kind} ${object.metadata?.name}`;
  const model = modelFor(object.apiVersion, object.kind);
  if (!model) {
    return [`${id}: no schema for ${object.apiVersion} ${object.kind} (a custom resource needs its @kubernetes-models package in CRD_MODELS)`];
  }
  const { proxy, reads } = recordReads(object);
  const errors: string[] = [];
  try {
    model.prototype.validate.call(proxy);
  } catch (error) {
    errors.push(`${id}: ${(error as Error).message}`);
  }
  // The validator reports every error rather than stopping at the first, so it has looked up every
  // defined field even when the object is invalid: a misspelt required field shows up twice, as missing and as unknown.
  const unknown = unknownFields(object, '', reads).map((path) => `${id}: ${path} is not a field of ${object.apiVersion} ${object.kind}`);
  return [...errors, ...unknown];
}
