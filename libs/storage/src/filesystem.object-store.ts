import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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

  async putStream(key: string, body: Readable, metadata: ObjectMetadata): Promise<number> {
    assertObjectKey(key);
    const path = join(this.root, key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${randomUUID()}.tmp`;
    const file = createWriteStream(temporary);
    try {
      await pipeline(body, file);
      await writeFile(`${temporary}.meta`, JSON.stringify(metadata));
    } catch (error) {
      await Promise.all([rm(temporary, { force: true }), rm(`${temporary}.meta`, { force: true })]);
      throw error;
    }
    await rename(`${temporary}.meta`, `${path}.meta.json`);
    await rename(temporary, path);
    return file.bytesWritten;
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

  async getStream(key: string): Promise<Readable | null> {
    assertObjectKey(key);
    const path = join(this.root, key);
    try {
      // Opened here, so that a missing object is null rather than a stream that fails later.
      const handle = await open(path, 'r');
      return handle.createReadStream();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertObjectKey(key);
    const path = join(this.root, key);
    await Promise.all([rm(path, { force: true }), rm(`${path}.meta.json`, { force: true })]);
  }
}
