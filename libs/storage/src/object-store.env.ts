import { IsIn, IsOptional, IsString, ValidateIf } from 'class-validator';

type EnvClass = new (...args: any[]) => object;

/**
 * Adds the object store's settings to a service's env class (router, video worker and edge read or
 * write the store): `class RouterEnv extends WithObjectStoreEnv(BaseEnv) { ... }`.
 */
export function WithObjectStoreEnv<TBase extends EnvClass>(Base: TBase) {
  class ObjectStoreEnv extends Base {
    /** `filesystem` (a directory; a shared volume when services run on several nodes) or `s3`. */
    @IsIn(['filesystem', 's3'])
    OBJECT_STORE: 'filesystem' | 's3' = 'filesystem';

    @IsString()
    OBJECT_STORE_DIR = '.local/objects';

    @ValidateIf((env: ObjectStoreEnv) => env.OBJECT_STORE === 's3')
    @IsString({ message: 'S3_BUCKET is required when OBJECT_STORE is s3' })
    S3_BUCKET?: string;

    /** An S3-compatible endpoint (MinIO, R2, Ceph, ...); unset means AWS. */
    @IsOptional() @IsString() S3_ENDPOINT?: string;
    @IsString() S3_REGION = 'us-east-1';
    @IsOptional() @IsString() S3_ACCESS_KEY_ID?: string;
    @IsOptional() @IsString() S3_SECRET_ACCESS_KEY?: string;
    /** Path-style addressing (`endpoint/bucket/key`), which most S3-compatible servers want. */
    @IsIn(['true', 'false']) S3_FORCE_PATH_STYLE: 'true' | 'false' = 'true';
  }
  return ObjectStoreEnv;
}

/** The settings createObjectStore reads. */
export interface ObjectStoreSettings {
  OBJECT_STORE: 'filesystem' | 's3';
  OBJECT_STORE_DIR: string;
  S3_BUCKET?: string;
  S3_ENDPOINT?: string;
  S3_REGION: string;
  S3_ACCESS_KEY_ID?: string;
  S3_SECRET_ACCESS_KEY?: string;
  S3_FORCE_PATH_STYLE: 'true' | 'false';
}
