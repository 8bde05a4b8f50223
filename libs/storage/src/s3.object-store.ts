import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { FilesystemObjectStore } from './filesystem.object-store';
import { assertObjectKey, ObjectMetadata, ObjectStore, StoredObject } from './object-store';
import { ObjectStoreSettings } from './object-store.env';

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
