import { familyOfSubject, type RouterFamily } from '@gateway/contracts';

/**
 * Whether a replica serving `families` subscribes `subject`: the subjects of its families (their
 * `family` in the `Rpc` table), and every subject of no family (the model list, cancels, health),
 * so that any running router answers those. A family nobody serves has no subscriber at all: the
 * NATS server answers the edge "no responders" at once, which it turns into a 503.
 */
export const servesSubject =
  (families: readonly RouterFamily[]) =>
  (subject: string): boolean => {
    const family = familyOfSubject(subject);
    return family === undefined || families.includes(family);
  };
