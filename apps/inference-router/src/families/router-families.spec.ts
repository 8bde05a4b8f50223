import 'reflect-metadata';
import { RouterFamilies, Subjects, type RouterFamily } from '@gateway/contracts';
import { InvalidEnvironmentError, parseEnv } from '@gateway/platform';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { ROUTER_CONTROLLERS } from '../app.module';
import { RouterLiveness } from '../liveness/router-liveness';
import { RouterEnv } from '../router.env';
import { servesSubject } from './router-families';

/** The one setting the router requires. */
const REASONING_SEAL_KEY = Buffer.alloc(32, 1).toString('base64');

/** Every subject the router's controllers have a handler for, as the transport sees them. */
function handledSubjects(): string[] {
  return ROUTER_CONTROLLERS.flatMap((controller) => {
    const prototype = controller.prototype as Record<string, unknown>;
    return Object.getOwnPropertyNames(prototype).flatMap((name) => {
      const patterns: unknown = name === 'constructor' ? undefined : Reflect.getMetadata(PATTERN_METADATA, prototype[name] as object);
      return patterns === undefined ? [] : ([] as unknown[]).concat(patterns).map(String);
    });
  }).sort();
}

/** What a replica with `families` subscribes (its `ROUTER_FAMILIES` read as the environment gives it). */
function subscribed(families: string): string[] {
  const env = parseEnv(RouterEnv, { ROUTER_FAMILIES: families, REASONING_SEAL_KEY });
  return handledSubjects().filter(servesSubject(env.ROUTER_FAMILIES));
}

/** Served whatever the families: the model list, cancels (the edge cancels every family's requests) and health. */
const EVERY_ROUTER = [Subjects.inferenceCancel, Subjects.inferenceModels, 'health.inference-router'];

describe('ROUTER_FAMILIES: the subjects a router replica subscribes', () => {
  it('by default every family: every subject the router handles, as before families existed', () => {
    expect(parseEnv(RouterEnv, { REASONING_SEAL_KEY }).ROUTER_FAMILIES).toEqual([...RouterFamilies]);
    expect(handledSubjects().filter(servesSubject(parseEnv(RouterEnv, { REASONING_SEAL_KEY }).ROUTER_FAMILIES))).toEqual(
      [
        ...EVERY_ROUTER,
        Subjects.inferenceText,
        Subjects.inferenceCountTokens,
        Subjects.inferenceDecide,
        Subjects.inferenceEmbeddings,
        Subjects.inferenceModerations,
        Subjects.inferenceImages,
        Subjects.inferenceImageEdits,
        Subjects.inferenceTranscriptions,
        Subjects.inferenceTranslations,
        Subjects.inferenceTranscriptionStream,
        Subjects.inferenceSpeech,
      ].sort(),
    );
  });

  it('embeddings only: embeddings and what every router serves, no text, count tokens, decisions or other media', () => {
    expect(subscribed('embeddings')).toEqual([...EVERY_ROUTER, Subjects.inferenceEmbeddings].sort());
  });

  it('text: generations and token counting', () => {
    expect(subscribed('text')).toEqual([...EVERY_ROUTER, Subjects.inferenceText, Subjects.inferenceCountTokens].sort());
  });

  it('the production groups: embeddings with moderations, images with audio, decisions', () => {
    expect(subscribed(' embeddings , moderations ')).toEqual([...EVERY_ROUTER, Subjects.inferenceEmbeddings, Subjects.inferenceModerations].sort());
    expect(subscribed('images')).toEqual([...EVERY_ROUTER, Subjects.inferenceImages, Subjects.inferenceImageEdits].sort());
    expect(subscribed('decisions')).toEqual([...EVERY_ROUTER, Subjects.inferenceDecide].sort());
    expect(subscribed('images,audio')).toEqual(
      [
        ...EVERY_ROUTER,
        Subjects.inferenceImages,
        Subjects.inferenceImageEdits,
        Subjects.inferenceSpeech,
        Subjects.inferenceTranscriptions,
        Subjects.inferenceTranslations,
        Subjects.inferenceTranscriptionStream,
      ].sort(),
    );
  });

  it('every family subject is served by exactly one family, and together they cover every handled subject', () => {
    const byFamily = RouterFamilies.map((family) => subscribed(family).filter((subject) => !EVERY_ROUTER.includes(subject)));
    const all = byFamily.flat();
    expect(new Set(all).size).toBe(all.length);
    expect([...all, ...EVERY_ROUTER].sort()).toEqual(handledSubjects());
  });

  it('refuses an unknown family or an empty list at startup, naming the variable and the bad value', () => {
    expect(() => parseEnv(RouterEnv, { ROUTER_FAMILIES: 'text,chat', REASONING_SEAL_KEY })).toThrow(InvalidEnvironmentError);
    expect(() => parseEnv(RouterEnv, { ROUTER_FAMILIES: 'text,chat', REASONING_SEAL_KEY })).toThrow(
      "ROUTER_FAMILIES: ROUTER_FAMILIES must be a comma-separated list of text, embeddings, moderations, images, decisions, audio; not 'chat'",
    );
    expect(() => parseEnv(RouterEnv, { ROUTER_FAMILIES: ' , ' })).toThrow(/ROUTER_FAMILIES must name at least one of text, embeddings/);
  });
});

describe('liveness probes a router replica answers "present" to', () => {
  const liveness = (families: RouterFamily[]) =>
    new RouterLiveness({ nats: { subscribe: () => ({ unsubscribe: () => undefined }) } } as never, { INFERENCE_HEARTBEAT_MS: 0, ROUTER_FAMILIES: families });

  it("its own, any router's, and each of its families' (shared in the queue group): never another family's", () => {
    const replica = liveness(['embeddings', 'moderations']);
    expect(replica.probes).toEqual([
      { subject: `inference.alive.${replica.id}`, kind: 'request', queue: false },
      { subject: 'inference.alive', kind: 'request', queue: 'inference-router' },
      { subject: 'inference.alive.family.embeddings', kind: 'request', queue: 'inference-router' },
      { subject: 'inference.alive.family.moderations', kind: 'request', queue: 'inference-router' },
    ]);
  });
});
