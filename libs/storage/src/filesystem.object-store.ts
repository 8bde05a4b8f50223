import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { assertObjectKey, ObjectMetadata, ObjectStore, StoredObject } from './object-store';

/**
 * Objects as files under one directory, with their metadata in a `.meta.json` beside them. Writes go
 * to a temporary name first and are renamed into place, so a reader never sees half a file.
 */
export class FilesystemObjectStore implements ObjectStore {
  private readonly root: string;

  constructor(directory: string) {
    this.root = resolve(directory);
  }

  async put(key: string, body: Buffer, metadata: ObjectMetadata): Promise<void> {
    assertObjectKey(key);
    const path = join(this.root, key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${randomUUID()}.tmp`;
    await writeFile(`${temporary}.meta`, JSON.stringify(metadata));
    await writeFile(temporary, body);
    // Metadata first: an object is visible only once both are in place.
    await rename(`${temporary}.meta`, `${path}.meta.json`);
    await rename(temporary, path);
  }

  async get(key: string): Promise<StoredObject | null> {
    assertObjectKey(key);
    const path = join(this.root, key);
    try {
      const [body, metadata] = await Promise.all([readFile(path), readFile(`${path}.meta.json`, 'utf8')]);
      return { body, metadata: JSON.parse(metadata) as ObjectMetadata };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}
