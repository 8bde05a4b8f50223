/**
 * Decides whether NetworkPolicies let a peer open a TCP connection to a pod, following the
 * Kubernetes semantics: a pod no Ingress policy selects accepts everything; a selected pod accepts a
 * connection that any rule of any selecting policy allows. Unknown selector operators and `ipBlock`
 * ranges other than "everything" are refused rather than guessed.
 */

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}
interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface PolicyPort {
  protocol?: string;
  port?: number | string;
  endPort?: number;
}
export interface NetworkPolicy {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: { from?: PolicyPeer[]; ports?: PolicyPort[] }[];
    egress?: unknown[];
  };
}

export interface PodUnderTest {
  namespace: string;
  labels: Record<string, string>;
  ports: { name?: string; containerPort: number }[];
}

/** A pod in a namespace, or a client outside the cluster. */
export type Peer = { external: true } | { namespace: string; namespaceLabels: Record<string, string>; podLabels: Record<string, string> };

export function matches(selector: LabelSelector, labels: Record<string, string>): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case 'In':
        return key in labels && values.includes(labels[key]);
      case 'NotIn':
        return !(key in labels) || !values.includes(labels[key]);
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
      default:
        throw new Error(`unknown selector operator ${String(operator)}`);
    }
  });
  return byLabels && byExpressions;
}

function governsIngress(policy: NetworkPolicy): boolean {
  return policy.spec.policyTypes ? policy.spec.policyTypes.includes('Ingress') : true;
}

function peerAllowed(from: PolicyPeer, policyNamespace: string, peer: Peer): boolean {
  if (from.ipBlock) {
    if (from.ipBlock.cidr !== '0.0.0.0/0' || from.ipBlock.except?.length) throw new Error(`ipBlock ${from.ipBlock.cidr} is not modelled`);
    return true;
  }
  if ('external' in peer) return false;
  const namespaceOk = from.namespaceSelector ? matches(from.namespaceSelector, peer.namespaceLabels) : peer.namespace === policyNamespace;
  const podOk = from.podSelector ? matches(from.podSelector, peer.podLabels) : true;
  return namespaceOk && podOk;
}

function portAllowed(rulePort: PolicyPort, pod: PodUnderTest, port: number): boolean {
  if ((rulePort.protocol ?? 'TCP') !== 'TCP') return false;
  if (rulePort.port === undefined) return true;
  if (typeof rulePort.port === 'string') {
    return pod.ports.some((candidate) => candidate.name === rulePort.port && candidate.containerPort === port);
  }
  return rulePort.endPort === undefined ? rulePort.port === port : port >= rulePort.port && port <= rulePort.endPort;
}

export function allowsIngress(policies: NetworkPolicy[], pod: PodUnderTest, peer: Peer, port: number): boolean {
  const selecting = policies.filter(
    (policy) => (policy.metadata.namespace ?? pod.namespace) === pod.namespace && governsIngress(policy) && matches(policy.spec.podSelector, pod.labels),
  );
  if (selecting.length === 0) return true;
  return selecting.some((policy) =>
    (policy.spec.ingress ?? []).some(
      (rule) =>
        (rule.ports === undefined || rule.ports.length === 0 || rule.ports.some((rulePort) => portAllowed(rulePort, pod, port))) &&
        (rule.from === undefined || rule.from.length === 0 || rule.from.some((from) => peerAllowed(from, pod.namespace, peer))),
    ),
  );
}
