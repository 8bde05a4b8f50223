import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { FilesystemObjectStore } from './filesystem.object-store';
import { assertObjectKey, ObjectMetadata, ObjectStore, StoredObject } from './object-store';
import { ObjectStoreSettings } from './object-store.env';

/** Bytes of one part of a multipart upload (S3's minimum is 5 MiB for every part but the last). */
const PART_BYTES = 8 * 1024 * 1024;

/** Objects in an S3-compatible bucket; whether one is public is kept in its user metadata. */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Buffer, metadata: ObjectMetadata): Promise<void> {
    assertObjectKey(key);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: metadata.contentType,
        Metadata: { public: String(metadata.public) },
      }),
    );
  }

  /**
   * A body under one part is one PUT; a longer one is a multipart upload of PART_BYTES parts, so at
   * most one part is held in memory at a time. A failed upload is aborted (no parts left billed).
   */
  async putStream(key: string, body: Readable, metadata: ObjectMetadata): Promise<number> {
    assertObjectKey(key);
    const target = { Bucket: this.bucket, Key: key };
    let uploadId: string | undefined;
    const parts: { ETag?: string; PartNumber: number }[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let total = 0;
    const flush = async (): Promise<void> => {
      if (uploadId === undefined) {
        const created = await this.client.send(
          new CreateMultipartUploadCommand({ ...target, ContentType: metadata.contentType, Metadata: { public: String(metadata.public) } }),
        );
        uploadId = created.UploadId!;
      }
      const PartNumber = parts.length + 1;
      const uploaded = await this.client.send(new UploadPartCommand({ ...target, UploadId: uploadId, PartNumber, Body: Buffer.concat(pending) }));
      parts.push({ ETag: uploaded.ETag, PartNumber });
      pending = [];
      pendingBytes = 0;
    };
    try {
      for await (const chunk of body) {
        pending.push(chunk as Buffer);
        pendingBytes += (chunk as Buffer).length;
        total += (chunk as Buffer).length;
        if (pendingBytes >= PART_BYTES) await flush();
      }
      if (uploadId === undefined) {
        await this.put(key, Buffer.concat(pending), metadata);
        return total;
      }
      if (pendingBytes > 0) await flush();
      await this.client.send(new CompleteMultipartUploadCommand({ ...target, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
      return total;
    } catch (error) {
      if (uploadId !== undefined) await this.client.send(new AbortMultipartUploadCommand({ ...target, UploadId: uploadId })).catch(() => undefined);
      throw error;
    }
  }

  async getStream(key: string): Promise<Readable | null> {
    assertObjectKey(key);
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return object.Body as Readable;
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertObjectKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async get(key: string): Promise<StoredObject | null> {
    assertObjectKey(key);
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const body = Buffer.from(await object.Body!.transformToByteArray());
      return {
        body,
        metadata: { contentType: object.ContentType ?? 'application/octet-stream', public: object.Metadata?.public === 'true' },
      };
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null;
      throw error;
    }
  }
}

export function createObjectStore(env: ObjectStoreSettings): ObjectStore {
  if (env.OBJECT_STORE === 'filesystem') return new FilesystemObjectStore(env.OBJECT_STORE_DIR);
  const client = new S3Client({
    region: env.S3_REGION,
    endpoint: env.S3_ENDPOINT,
    forcePathStyle: env.S3_FORCE_PATH_STYLE === 'true',
    credentials:
      env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY ? { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY } : undefined,
  });
  return new S3ObjectStore(client, env.S3_BUCKET!);
}
