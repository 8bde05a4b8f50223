import type { Readable } from 'node:stream';

/** What is kept beside an object's bytes. */
export interface ObjectMetadata {
  contentType: string;
  /** A public object is served without a signature. */
  public: boolean;
}

export interface StoredObject {
  body: Buffer;
  metadata: ObjectMetadata;
}

/**
 * Where generated media (images, videos) live until clients fetch them. Writers (router, video
 * worker) put objects; the edge serves them at `/v1/files/<key>` and signs the URLs of private ones.
 */
export interface ObjectStore {
  put(key: string, body: Buffer, metadata: ObjectMetadata): Promise<void>;
  /** Null when there is no such object. */
  get(key: string): Promise<StoredObject | null>;
  /**
   * Writes `body` as it arrives, never holding it whole (uploads staged by the edge); resolves with
   * the bytes written once the object is visible. A `body` that errors leaves no object behind.
   */
  putStream(key: string, body: Readable, metadata: ObjectMetadata): Promise<number>;
  /** The object's bytes as a stream; null when there is no such object. */
  getStream(key: string): Promise<Readable | null>;
  /** Removes the object; a missing one is no error. */
  delete(key: string): Promise<void>;
}

export const OBJECT_STORE = Symbol('OBJECT_STORE');

/** Keys are ours (`images/<uuid>.png`): lower-case path segments, never `..`. */
const KEY_PATTERN = /^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_.-]*)*$/;

export function isValidObjectKey(key: string): boolean {
  return key.length <= 512 && KEY_PATTERN.test(key) && !key.split('/').some((segment) => segment === '..' || segment === '.');
}

export function assertObjectKey(key: string): void {
  if (!isValidObjectKey(key)) throw new Error(`invalid object key: ${JSON.stringify(key)}`);
}
